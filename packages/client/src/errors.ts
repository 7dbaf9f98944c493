/** Every failure the service answers, as one error: its status and envelope (docs/api.md#wire-conventions). */
export class UgsError extends Error {
  override readonly name = 'UgsError';
  /** A sync's refusal (docs/api.md#sync-tenants-as-code): the NDJSON line (from 1) of the group at fault, when the service names one. */
  readonly line: number | undefined;
  /** A sync's refusal (docs/api.md#sync-tenants-as-code): the JSON array index (from 0) of the group at fault, when the service names one. */
  readonly index: number | undefined;

  constructor(
    /** The HTTP status; 0 when no answer came (a network failure after the last retry). */
    readonly status: number,
    /** The envelope's snake_case code, e.g. `user_group_not_found`; `network_error` when no answer came. */
    readonly code: string,
    message: string,
    /** The request field at fault, when one is. */
    readonly field: string | undefined,
    /** The request id the service logged the request under (X-Request-Id), when it answered. */
    readonly requestId: string | undefined,
    options: { cause?: unknown; line?: number | undefined; index?: number | undefined } = {},
  ) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.line = options.line;
    this.index = options.index;
  }
}
