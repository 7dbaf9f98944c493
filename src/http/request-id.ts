import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

// A caller's id is kept when it is sane (printable ASCII, at most 128 characters) so that logs
// correlate across systems; anything else could be used to forge or flood log lines.
const SANE_REQUEST_ID = /^[\x20-\x7e]{1,128}$/;

export function requestIdOf(request: IncomingMessage): string {
  const supplied = request.headers['x-request-id'];
  return typeof supplied === 'string' && SANE_REQUEST_ID.test(supplied) ? supplied : randomUUID();
}
