import { AppError } from '../domain/errors.js';

/*
 * The error catalogue's second half: the messages of requests the service cannot take as they came
 * (malformed HTTP, JSON or query text, a field outside its schema, a page beyond its bounds). The
 * codes and their statuses are the catalogue's (src/domain/errors.ts); only the transport and the
 * wire format can detect these, so their wording lives beside them rather than in the domain.
 * Every `field` and key named here was cut by `echoable` before it arrived.
 */
export const requestFailure = {
  missingHost: () => new AppError('bad_request', 'Send a Host header: HTTP/1.1 requires one.', { field: 'Host' }),
  shuttingDown: () =>
    new AppError('unavailable', 'The server is shutting down; retry on another instance or shortly.', {
      retryAfterSeconds: 1,
    }),
  notHttp: () => new AppError('bad_request', 'The request is not valid HTTP.'),
  malformed: () => new AppError('bad_request', 'The request is malformed.'),
  internal: (cause: unknown) => new AppError('internal_error', 'An internal error occurred.', { cause }),
  headersTooLarge: (maxKiB: number) =>
    new AppError('headers_too_large', `The request line and headers are larger than ${maxKiB} KiB.`),
  requestTimeout: (headersMs: number, requestMs: number) =>
    new AppError(
      'request_timeout',
      `The request did not arrive in time: headers are due within ${headersMs} ms, the whole request within ${requestMs} ms.`,
    ),
  methodNotAllowed: (method: string, allow: string) =>
    new AppError('method_not_allowed', `${method} is not allowed here; use one of ${allow}.`),
  nothingAt: (path: string) => new AppError('not_found', `There is nothing at ${path}.`),
  consoleNotBuilt: () =>
    new AppError('not_found', 'The admin console is not built into this installation: run `npm run build`.'),
  twoCredentials: () =>
    new AppError(
      'unauthenticated',
      'Send exactly one "Authorization: Token <API_TOKEN>" header (or its synonym Explo-Authorization).',
    ),
  noCredential: () => new AppError('unauthenticated', 'Send "Authorization: Token <API_TOKEN>".'),
  /** A request made with the console's session cookie must prove it comes from the console's own page. */
  csrfToken: (header: string) =>
    new AppError('invalid_csrf_token', `Send the console session's CSRF token in the ${header} header.`, {
      field: header,
    }),
  noConsoleSession: () =>
    new AppError('unauthenticated', 'Sign in to the console first: this request carries no console session.'),
  /** Two session cookies are two meanings, refused like two Authorization headers. */
  twoSessionCookies: () => new AppError('unauthenticated', 'Send one console session cookie, not several.'),
  rateLimited: (quota: number, unit: string, burst: number, retryAfterSeconds: number) =>
    new AppError(
      'rate_limited',
      `This API token may make ${quota} request${quota === 1 ? '' : 's'} a ${unit}, up to ${burst} at once; retry in ${retryAfterSeconds} s.`,
      {
        retryAfterSeconds,
      },
    ),

  bodyTooLarge: (limitBytes = 1024 * 1024) =>
    new AppError('payload_too_large', `The request body is larger than ${limitBytes / (1024 * 1024)} MiB.`),
  /** One item of a body of many (a sync's group) over its bound: named by its line or index. */
  itemTooLarge: (limitBytes: number) =>
    new AppError('payload_too_large', `One item of the body may be at most ${limitBytes / (1024 * 1024)} MiB of JSON.`),
  /** The client stopped sending (or closed) before the body's end. */
  bodyIncomplete: () => new AppError('bad_request', 'The request body ended before it was complete.'),
  /** A streamed body (a sync's) beyond the bodies one API token, or this server, may send at once. */
  inFlightLimit: (whose: 'token' | 'server', limit: number, retryAfterSeconds: number) =>
    new AppError(
      'in_flight_limit',
      whose === 'token'
        ? `This API token is already sending ${limit} such request bodies at once, the most it may; retry once one is answered.`
        : `This server is already reading ${limit} such request bodies at once, the most it may; retry in ${retryAfterSeconds} s or on another instance.`,
      { retryAfterSeconds },
    ),
  contentLengthMismatch: () => new AppError('invalid_json', 'The request body does not match its Content-Length.'),
  notJsonMediaType: () =>
    new AppError('unsupported_media_type', 'Send the request body as JSON with "Content-Type: application/json".'),
  bodyNotUtf8: () => new AppError('invalid_json', 'The request body is not valid UTF-8.'),
  syncBodyMissing: () =>
    new AppError('invalid_json', 'Send the groups as a JSON array, or as NDJSON (one group per line).'),
  bodyNotObject: () => new AppError('invalid_json', 'The request body must be a JSON object.'),
  /** A body of many JSON items (an import's, a sync's) that is not JSON. */
  itemsNotJson: () => new AppError('invalid_json', 'The request body is not valid JSON.'),
  /** A sync's item (an NDJSON line, an array element, a YAML list item) that is not an object. */
  groupNotObject: () => new AppError('invalid_json', 'Each group must be a JSON object.'),
  /** A file the CLI reads as JSON that is not (a sync's: its refusals start "Line N: "). */
  textNotJson: () => new AppError('invalid_json', 'The text is not valid JSON.'),
  textNotObject: () => new AppError('invalid_json', 'The text must be a JSON object.'),
  textNotUtf8: () => new AppError('invalid_json', 'The text is not valid UTF-8.'),
  textItemTooLarge: (limitBytes: number) =>
    new AppError(
      'payload_too_large',
      `A group (a line, or an element of the array) may be at most ${limitBytes / (1024 * 1024)} MiB of JSON.`,
    ),
  /**
   * A file of many JSON items the CLI reads (an import's, its supplement) that it cannot go on
   * reading: worded as the reason after the CLI's "<file>, line N: " (JsonItemRefusals).
   */
  fileArrayMalformed: () => new AppError('invalid_json', 'not a well-formed JSON array'),
  fileNotUtf8: () => new AppError('invalid_json', 'not valid UTF-8'),
  fileItemTooLarge: (limitBytes: number) =>
    new AppError(
      'payload_too_large',
      `more than ${limitBytes / (1024 * 1024)} MiB of JSON (a line, or an element of the array, may be at most ${limitBytes / (1024 * 1024)} MiB)`,
    ),
  /** A YAML tenants file that breaks `rule` at `line`. */
  yamlLine: (line: number, rule: string) => new AppError('invalid_request', `Line ${line}: ${rule}`),
  /**
   * A JSON defect of the request body, of the JSON text in the query value `field`, or of a file the
   * CLI reads (`text`).
   */
  jsonDefect: (
    kind: 'syntax' | 'duplicate_key' | 'lone_surrogate' | 'forbidden_key',
    source: 'body' | 'text' | { field: string },
    key?: string,
  ) => {
    const field = typeof source === 'object' ? source.field : undefined;
    const where =
      field !== undefined ? `"${field}" in the query string` : source === 'text' ? 'The text' : 'The request body';
    const options = field === undefined ? {} : { field };
    switch (kind) {
      case 'syntax':
        return new AppError('invalid_json', `${where} is not valid JSON.`, options);
      case 'duplicate_key':
        return new AppError('invalid_json', `${where} has the key "${key}" twice in one object.`, options);
      case 'lone_surrogate':
        // A lone surrogate is bad JSON in a body but a bad value in a query (docs/api.md#wire-conventions).
        return new AppError(
          field === undefined ? 'invalid_json' : 'invalid_field',
          `${where} has a lone surrogate escape (\\ud800 to \\udfff unpaired), which is not text.`,
          options,
        );
      case 'forbidden_key':
        return new AppError(
          'invalid_field',
          `Object keys "__proto__" and "constructor.prototype" are not accepted anywhere in ${source === 'text' ? 'the text' : 'a request'}.`,
          options,
        );
    }
  },
  queryNotUtf8: (field: string) =>
    new AppError('invalid_field', `"${field}" in the query string is not UTF-8 text.`, { field }),
  queryNul: (field: string) =>
    new AppError('invalid_field', `"${field}" in the query string may not contain a NUL character.`, { field }),
  /** A get-or-create takes its fields from the body or from the query string, never both. */
  bodyAndQuery: () =>
    new AppError(
      'invalid_request',
      'Send the fields in the JSON body or in the query string, not both: the request has both.',
    ),
  queryRepeated: (field: string) =>
    new AppError('invalid_field', `"${field}" must appear once in the query string.`, { field }),
  yearOutOfRange: (field: string) =>
    new AppError('invalid_field', `"${field}" must fall within the years 0001 to 9999 (UTC).`, { field }),
  foreignCursor: () =>
    new AppError('invalid_field', '"cursor" is not a cursor this service handed out.', { field: 'cursor' }),
  pageTooLarge: (maxPageSize: number) =>
    new AppError('invalid_field', `"limit" must be at most ${maxPageSize}.`, { field: 'limit' }),

  invalidRequest: () => new AppError('invalid_field', 'The request is invalid.'),
  missingField: (field: string) => new AppError('missing_field', `"${field}" is required.`, { field }),
  unknownField: (field: string) =>
    new AppError('unknown_field', `"${field}" is not a field of this request.`, { field }),
  invalidPart: (part: string) => new AppError('invalid_field', `The ${part} of this request are invalid.`),
  /** A field outside its schema: `rule` is the schema's own wording of what it takes. */
  invalidField: (field: string, rule: string) => new AppError('invalid_field', rule, { field }),
};
