/*
 * The console's one way to the service: the existing JSON APIs, authenticated by the session cookie
 * (which the browser sends and no script can read) and the session's CSRF token, which every request
 * carries in X-CSRF-Token. The API token the operator signed in with is never kept here.
 */

import { UgsError } from '../../packages/client/src/errors.js';

/** A failure the service answered, as the client library throws it: status, code, field, request id. */
export { UgsError };

type Query = Record<string, string | number | boolean | undefined | null>;

let csrfToken = '';
let onSignedOut: () => void = () => undefined;

/** Set once signed in; `signedOut` runs when the service says the session has ended. */
export function startSession(token: string, signedOut: () => void): void {
  csrfToken = token;
  onSignedOut = signedOut;
}

function withQuery(path: string, query: Query | undefined): string {
  const pairs = Object.entries(query ?? {}).filter(
    (pair): pair is [string, string | number | boolean] => pair[1] !== undefined && pair[1] !== null && pair[1] !== '',
  );
  return pairs.length === 0
    ? path
    : `${path}?${new URLSearchParams(pairs.map(([key, value]) => [key, String(value)])).toString()}`;
}

interface Failure {
  success: 0;
  error: { code: string; message: string; field?: string; request_id?: string };
}

/** Calls the service and returns the success body; throws UgsError with the envelope's code, message and field. */
export async function api<T>(
  method: string,
  path: string,
  options: { query?: Query; body?: unknown } = {},
): Promise<T> {
  const headers: Record<string, string> = { 'X-CSRF-Token': csrfToken, Accept: 'application/json' };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(withQuery(path, options.query), {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  const body = (await response.json().catch(() => null)) as (T & { success: 1 }) | Failure | null;
  if (response.ok && body && body.success === 1) return body as T;
  const error =
    body && body.success === 0
      ? body.error
      : { code: 'unexpected_response', message: `The service answered ${response.status}.` };
  if (response.status === 401 && path !== '/console/session') onSignedOut();
  throw new UgsError(response.status, error.code, error.message, error.field, error.request_id);
}

/** One page of a cursor-paginated admin list (`plural` is the list's key in the body). */
export async function list<T>(
  path: string,
  plural: string,
  query: Query,
): Promise<{ items: T[]; next: string | null }> {
  const body = await api<Record<string, unknown>>('GET', path, { query });
  return { items: body[plural] as T[], next: (body.next_cursor as string | null | undefined) ?? null };
}
