// A request a test keeps in flight for as long as it wants (graceful shutdown suites).
import { request } from 'node:http';
import type { ApiResponse } from './http-client.js';

/**
 * GET /api/user with `Expect: 100-continue`: resolves `accepted` once the server has read the
 * headers and started on the request (the interim 100 response), and holds the body back until
 * `finish()`, so that the request is in flight for as long as the test wants.
 */
export function heldGetOrCreate(baseUrl: string, token: string, userGroupId: string) {
  const payload = JSON.stringify({ user_group_id: userGroupId });
  let onContinue: () => void = () => undefined;
  let finish: () => void = () => undefined;
  const continued = new Promise<void>((resolve) => (onContinue = resolve));
  const response = new Promise<ApiResponse>((resolve, reject) => {
    const outgoing = request(
      `${baseUrl}/api/user`,
      {
        method: 'GET',
        agent: false,
        headers: {
          authorization: `Token ${token}`,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(payload)),
          expect: '100-continue',
        },
      },
      (incoming) => {
        let raw = '';
        incoming.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
        incoming.on('end', () =>
          resolve({
            status: incoming.statusCode ?? 0,
            headers: incoming.headers,
            body: raw === '' ? undefined : JSON.parse(raw),
            raw,
          }),
        );
      },
    );
    outgoing.on('continue', () => onContinue());
    outgoing.on('error', reject);
    finish = () => outgoing.end(payload);
  });
  // A failure is the test's to report when it awaits the response, not an unhandled rejection before.
  response.catch(() => undefined);
  const accepted = Promise.race([
    continued,
    response.then((early) => {
      throw new Error(`answered before its body was sent: ${early.status} ${early.raw}`);
    }),
  ]);
  return { accepted, response, finish: () => finish() };
}
