// Slow and oversized clients against `ugs serve` as a real process (short timeouts set through the
// UGS_* variables): each is answered with the failure envelope and cut off, and the server keeps
// serving everyone else meanwhile.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, type ApiRequest } from '../support/http-client.js';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { uniqueId } from '../support/unique-id.js';
import { sleep } from '../support/wait-for.js';

const HEADERS_TIMEOUT_MS = 1_000;
const REQUEST_TIMEOUT_MS = 2_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** Far beyond the timeouts (and the 1 s at which Node checks them): a connection still open by then was not cut. */
const CUT_OFF_BOUND_MS = 15_000;
const TRICKLE_EVERY_MS = 100;
const MAX_HEADER_BYTES = 16 * 1024;
const BODY_LIMIT_BYTES = 1024 * 1024;

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** One HTTP/1.1 response out of raw bytes (status line, headers, a body of Content-Length bytes). */
function parseResponse(raw: string): RawResponse & { rest: string } {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no complete response in ${JSON.stringify(raw)}`);
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  const length = Number(headers['content-length']);
  const bodyText = Buffer.from(raw.slice(end + 4))
    .subarray(0, length)
    .toString('utf8');
  return {
    status: Number(statusLine!.split(' ')[1]),
    headers,
    body: JSON.parse(bodyText),
    rest: raw.slice(end + 4 + bodyText.length),
  };
}

/** A raw TCP connection: what the server sent on it, and when it closed (a reset after the answer counts as closed). */
class RawConnection {
  readonly socket: Socket;
  readonly closed: Promise<string>;
  private data = '';
  private trickling: NodeJS.Timeout | undefined;

  constructor(server: ServeProcess) {
    this.socket = connect(Number(new URL(server.baseUrl).port), '127.0.0.1');
    this.socket.on('data', (chunk: Buffer) => (this.data += chunk.toString('utf8')));
    this.socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve(this.data)));
    void this.closed.then(() => clearInterval(this.trickling));
  }

  get received(): string {
    return this.data;
  }

  /** Sends one more byte every TRICKLE_EVERY_MS until the server closes the connection. */
  trickle(byte: string): void {
    this.trickling = setInterval(() => this.socket.write(byte), TRICKLE_EVERY_MS);
  }

  /** Everything the server sent before it closed the connection; fails if it is still open after CUT_OFF_BOUND_MS. */
  async receivedBeforeClose(): Promise<string> {
    const raw = await Promise.race([this.closed, sleep(CUT_OFF_BOUND_MS).then(() => undefined)]);
    if (raw === undefined) {
      this.socket.destroy();
      throw new Error(
        `the server left the connection open for ${CUT_OFF_BOUND_MS} ms; it sent ${JSON.stringify(this.data)}`,
      );
    }
    return raw;
  }

  /** The one response the server sent before it closed the connection. */
  async answerBeforeClose(): Promise<RawResponse> {
    const response = parseResponse(await this.receivedBeforeClose());
    expect(response.rest, 'nothing after the one response').toBe('');
    return response;
  }

  /** Resolves with the next full response on this connection. */
  async nextResponse(): Promise<RawResponse> {
    for (const deadline = Date.now() + CUT_OFF_BOUND_MS; Date.now() < deadline; await sleep(20)) {
      try {
        const response = parseResponse(this.data);
        this.data = response.rest;
        return response;
      } catch {
        // not complete yet
      }
    }
    throw new Error(`no complete response within ${CUT_OFF_BOUND_MS} ms; got ${JSON.stringify(this.data)}`);
  }
}

/** The failure envelope with this status and code, its request id also in X-Request-Id; the connection is closed. */
function expectClosingFailure(response: RawResponse, status: number, code: string): void {
  expect({ status: response.status, code: response.body?.error?.code }, JSON.stringify(response)).toEqual({
    status,
    code,
  });
  expect(response.body).toEqual({
    success: 0,
    error: { code, message: expect.any(String), request_id: response.headers['x-request-id'] },
  });
  expect(response.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', connection: 'close' });
}

describe('hardening against slow and oversized clients', () => {
  let db: TestDatabase;
  let server: ServeProcess;
  let admin: string;
  /** An API token that only the hostile requests carry: it must not reach the logs. */
  let hostileToken: string;

  const call = (req: ApiRequest) => send(server.baseUrl, req);

  /** Normal requests from other connections, all answered while the hostile ones hang. */
  async function expectServedMeanwhile(count = 5): Promise<void> {
    const responses = await Promise.all(
      Array.from({ length: count }, () =>
        call({ method: 'GET', path: '/api/user', token: admin, body: { user_group_id: uniqueId('meanwhile') } }),
      ),
    );
    for (const response of responses) expect(response.status, response.raw).toBe(200);
  }

  /** The rejection is logged by its code (the log reaches us through a pipe: wait for it), and the token the request carried is not. */
  async function expectLoggedWithoutToken(code: string): Promise<void> {
    for (
      const deadline = Date.now() + CUT_OFF_BOUND_MS;
      !server.stdout().includes(`"code":"${code}"`);
      await sleep(20)
    ) {
      if (Date.now() > deadline) throw new Error(`no log line with code ${code}:\n${server.stdout()}`);
    }
    expect(server.stdout()).not.toContain(hostileToken);
  }

  async function groupExists(userGroupId: string): Promise<boolean> {
    const listed = await call({ method: 'GET', path: `/api/admin/user_groups?q=${userGroupId}`, token: admin });
    expect(listed.status, listed.raw).toBe(200);
    return listed.body.user_groups.length > 0;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await startServeProcess(db, {
      env: {
        UGS_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        UGS_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
        UGS_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
        // Rejected connections are logged at info: the log check at the end needs them.
        UGS_LOG_LEVEL: 'info',
      },
    });
    admin = server.adminTokens().Customer;
    const issued = await call({
      method: 'POST',
      path: '/api/admin/api_tokens',
      token: admin,
      body: { name: 'hostile', scope: 'write' },
    });
    expect(issued.status, issued.raw).toBe(200);
    hostileToken = issued.body.api_token.token;
  });

  afterAll(async () => {
    await stopAllServeProcesses();
    await db?.drop();
  });

  it('slowloris: headers trickled in, or nothing sent at all, get 408 request_timeout and the connection closed, logged without the token; others are served meanwhile', async () => {
    const trickled = Array.from({ length: 5 }, () => {
      const connection = new RawConnection(server);
      connection.socket.write(
        `GET /api/user HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token ${hostileToken}\r\nX-Slow: `,
      );
      connection.trickle('a');
      return connection;
    });
    const silent = new RawConnection(server);

    await expectServedMeanwhile();
    for (const connection of [...trickled, silent])
      expectClosingFailure(await connection.answerBeforeClose(), 408, 'request_timeout');
    await expectLoggedWithoutToken('request_timeout');
  });

  it('a body trickled in is cut with 408 request_timeout after the request timeout and changes nothing; others are served meanwhile', async () => {
    const userGroupId = uniqueId('slow_body');
    const body = JSON.stringify({ user_group_id: userGroupId }).padEnd(500, ' ');
    const connection = new RawConnection(server);
    connection.socket.write(
      [
        'GET /api/user HTTP/1.1',
        'Host: 127.0.0.1',
        `Authorization: Token ${hostileToken}`,
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
        '',
        body.slice(0, 20),
      ].join('\r\n'),
    );
    connection.trickle(' ');

    await expectServedMeanwhile();
    expectClosingFailure(await connection.answerBeforeClose(), 408, 'request_timeout');
    expect(await groupExists(userGroupId)).toBe(false);
  });

  it(`headers over ${MAX_HEADER_BYTES / 1024} KiB get 431 headers_too_large and the connection closed, logged without the token; just under the limit is served`, async () => {
    const connection = new RawConnection(server);
    const userGroupId = uniqueId('big_headers');
    connection.socket.write(
      `GET /api/user?user_group_id=${userGroupId} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token ${hostileToken}\r\nX-Filler: ${'a'.repeat(MAX_HEADER_BYTES)}\r\n\r\n`,
    );
    expectClosingFailure(await connection.answerBeforeClose(), 431, 'headers_too_large');
    expect(await groupExists(userGroupId)).toBe(false);
    await expectLoggedWithoutToken('headers_too_large');

    const underLimit = await call({
      method: 'GET',
      path: '/api/user',
      token: admin,
      body: { user_group_id: uniqueId('fat_headers') },
      headers: { 'x-filler': 'a'.repeat(MAX_HEADER_BYTES - 1024) },
    });
    expect(underLimit.status, underLimit.raw).toBe(200);
  });

  it('a body over 1 MiB gets the 413 payload_too_large envelope and changes nothing', async () => {
    const userGroupId = uniqueId('big_body');
    const rawBody = JSON.stringify({ user_group_id: userGroupId, name: 'x'.repeat(BODY_LIMIT_BYTES) });
    const response = await call({ method: 'GET', path: '/api/user', token: admin, rawBody });
    expect({ status: response.status, code: response.body?.error?.code }, response.raw).toEqual({
      status: 413,
      code: 'payload_too_large',
    });
    expect(response.body).toEqual({
      success: 0,
      error: { code: 'payload_too_large', message: expect.any(String), request_id: response.headers['x-request-id'] },
    });
    expect(await groupExists(userGroupId)).toBe(false);
  });

  it('an idle keep-alive connection outlives the headers and request timeouts, and is announced with the keep-alive timeout', async () => {
    const connection = new RawConnection(server);
    const request = (id: string) =>
      `GET /api/user?user_group_id=${id} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token ${admin}\r\n\r\n`;
    connection.socket.write(request(uniqueId('keep_alive')));
    const first = await connection.nextResponse();
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.headers).toMatchObject({
      connection: 'keep-alive',
      'keep-alive': `timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`,
    });

    // Idle between requests is not a slow request: neither timeout applies to it.
    await sleep(REQUEST_TIMEOUT_MS + 1_500);
    connection.socket.write(request(uniqueId('keep_alive')));
    const second = await connection.nextResponse();
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    connection.socket.destroy();
  });
});

describe('the idle timeout', () => {
  let db: TestDatabase;
  let server: ServeProcess;

  beforeAll(async () => {
    db = await createTestDatabase();
    // Shorter than the headers timeout here, so that it, not the headers timeout, ends the connection.
    server = await startServeProcess(db, { env: { UGS_IDLE_TIMEOUT_MS: '1000' } });
  });

  afterAll(async () => {
    await stopAllServeProcesses();
    await db?.drop();
  });

  it('closes a connection on which nothing moves, without an answer', async () => {
    const connection = new RawConnection(server);
    connection.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    expect(await connection.receivedBeforeClose()).toBe('');
  });
});
