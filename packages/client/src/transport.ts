import { randomId } from '#crypto';
import { UgsError } from './errors.js';

interface CommonOptions {
  /** The service's base URL, e.g. https://ugs.example.com. */
  baseUrl: string;
  /** Retries after a 429, a 503 or a network failure (default 3). */
  maxRetries?: number;
  /** The longest wait between two tries, whatever Retry-After says (default 30 s). */
  maxRetryDelayMs?: number;
  /** Each try is abandoned after this long, and counts as a network failure (default 30 s). */
  timeoutMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

/** How the client authenticates: with an API token, or as the admin console's signed-in page. */
export type TransportOptions = CommonOptions &
  (
    | {
        /** An API token (ugs_live_… or ugs_test_…), sent as `Authorization: Token …`. */
        apiToken: string;
        consoleSession?: never;
      }
    | {
        /**
         * A console session (a page of the service's own origin, docs/security.md#admin-console-sessions): the browser sends the
         * HttpOnly session cookie, and the client sends the session's CSRF token in X-CSRF-Token, which
         * it keeps from the answers of createConsoleSession and getConsoleSession. No API token.
         */
        consoleSession: true;
        apiToken?: never;
      }
  );

/** What the client sends to say who it is; the console session's CSRF token arrives after the client is made. */
export interface Credentials {
  headers(): Record<string, string>;
  /** Keeps the CSRF token of the console session an answer named (null: signed out). */
  setCsrfToken(token: string | null): void;
}

export function credentialsOf(options: TransportOptions): Credentials {
  if (options.consoleSession !== true) {
    const authorization = { authorization: `Token ${options.apiToken}` };
    return { headers: () => authorization, setCsrfToken: () => undefined };
  }
  let csrfToken: string | null = null;
  return {
    headers: (): Record<string, string> => (csrfToken === null ? {} : { 'x-csrf-token': csrfToken }),
    setCsrfToken: (token) => {
      csrfToken = token;
    },
  };
}

export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** A body sent as it is (a sync's file) with its media type, instead of `body` as JSON. */
  text?: { content: string; mediaType: string };
  /** A write's Idempotency-Key; one is made per call when absent, and every retry sends the same. */
  idempotencyKey?: string;
  /** A floor under the transport's time limit per try, for a call that may legitimately run longer. */
  minTimeoutMs?: number;
  /** A success answered without the envelope (RFC 7662 introspection): any 2xx JSON object is the answer. */
  bare?: true;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const RETRIED_STATUSES = new Set([429, 503]);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One request, retried safely: every write carries an Idempotency-Key (the same on each try), so a
 * retry after a lost response gets the first response again rather than acting twice; a 429 or 503
 * waits as Retry-After says; network failures wait with jittered backoff.
 */
export function createTransport(options: TransportOptions, credentials: Credentials) {
  const maxRetries = options.maxRetries ?? 3;
  const maxDelay = options.maxRetryDelayMs ?? 30_000;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const doFetch = options.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/+$/, '');
  // A session's answers belong to one operator: the browser sends its cookie and keeps no copy.
  const session = options.consoleSession ? ({ credentials: 'same-origin', cache: 'no-store' } as const) : {};

  return async function send<T>(call: Call): Promise<T> {
    const url = new URL(`${base}${call.path}`);
    for (const [name, value] of Object.entries(call.query ?? {}))
      if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = { ...credentials.headers(), accept: 'application/json' };
    if (call.text !== undefined) headers['content-type'] = call.text.mediaType;
    else if (call.body !== undefined) headers['content-type'] = 'application/json';
    if (WRITES.has(call.method)) headers['idempotency-key'] = call.idempotencyKey ?? randomId();
    const body = call.text?.content ?? (call.body === undefined ? undefined : JSON.stringify(call.body));

    for (let attempt = 0; ; attempt += 1) {
      let response: Response;
      try {
        response = await doFetch(url, {
          method: call.method,
          headers,
          body,
          signal: AbortSignal.timeout(Math.max(timeoutMs, call.minTimeoutMs ?? 0)),
          ...session,
        });
      } catch (error) {
        if (attempt >= maxRetries)
          throw new UgsError(
            0,
            'network_error',
            `No answer from ${url.origin}: ${(error as Error).message}`,
            undefined,
            undefined,
            { cause: error },
          );
        await sleep(Math.min(maxDelay, Math.random() * 100 * 2 ** attempt));
        continue;
      }
      if (RETRIED_STATUSES.has(response.status) && attempt < maxRetries) {
        await response.body?.cancel();
        await sleep(Math.min(maxDelay, retryAfterMs(response.headers.get('retry-after')) ?? 100 * 2 ** attempt));
        continue;
      }
      return answerOf<T>(response, call.bare);
    }
  };
}

/** Retry-After in seconds (the service's form) or as an HTTP date. */
function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

interface Envelope {
  success?: number;
  error?: { code?: string; message?: string; field?: string; line?: number; index?: number; request_id?: string };
}

/** The answer of a success, or the UgsError of a failure; `bare`: a success has no envelope. */
export async function answerOf<T>(response: Response, bare?: true): Promise<T> {
  const text = await response.text();
  let parsed: Envelope | undefined;
  try {
    parsed = JSON.parse(text) as Envelope;
  } catch {
    parsed = undefined;
  }
  if (response.ok && (parsed?.success === 1 || (bare && typeof parsed === 'object' && parsed !== null)))
    return parsed as T;
  const error = parsed?.error;
  throw new UgsError(
    response.status,
    error?.code ?? 'unexpected_response',
    error?.message ?? `HTTP ${response.status} without the service's envelope.`,
    error?.field,
    error?.request_id ?? response.headers.get('x-request-id') ?? undefined,
    { line: error?.line, index: error?.index },
  );
}
