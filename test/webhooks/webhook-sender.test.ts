// A 2xx within the timeout is success whatever its body's length,
// against a real receiver on loopback.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemResolver } from '../../src/webhooks/address-policy.js';
import { createWebhookSender, MAX_RESPONSE_BYTES } from '../../src/webhooks/webhook-sender.js';

describe('the webhook sender', () => {
  let server: http.Server;
  let base: string;
  const sender = createWebhookSender({ timeoutMs: 10_000, allowPrivate: true, resolve: systemResolver });

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      request.resume();
      const status = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('status') ?? 200);
      if (request.url?.startsWith('/large')) {
        // Four times the most that is read, in chunks, as a chatty receiver would answer.
        response.writeHead(status, { 'content-type': 'text/plain' });
        const chunk = 'x'.repeat(16 * 1024);
        for (let sent = 0; sent < 4 * MAX_RESPONSE_BYTES; sent += chunk.length) response.write(chunk);
        response.end();
      } else if (request.url?.startsWith('/cut')) {
        // A 2xx whose body is cut off: the answer was given.
        response.writeHead(200, { 'content-length': '1000000' });
        response.write('partial', () => response.socket?.destroy());
      } else {
        response.writeHead(status).end('ok');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    sender.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const send = (path: string) => sender.send({ url: `${base}${path}`, body: '{}', headers: {} });

  it('counts a 2xx with a body over 64 KiB as answered with its status (not as cut short)', async () => {
    expect(await send('/large')).toEqual({ status: 200, error: null });
    expect(await send('/large?status=204')).toMatchObject({ status: 204, error: null });
  });

  it('counts a 2xx whose body is then cut off as answered', async () => {
    expect(await send('/cut')).toEqual({ status: 200, error: null });
  });

  it('still reports a non-2xx with a large body by its status', async () => {
    expect(await send('/large?status=500')).toEqual({ status: 500, error: null });
  });

  it('keeps working on the same connections afterwards', async () => {
    for (let round = 0; round < 3; round += 1) expect(await send('/small')).toEqual({ status: 200, error: null });
  });
});
