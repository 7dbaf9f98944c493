// What only a real socket shows (docs/api.md#wire-conventions): a client that pipelines without reading holds a few
// responses at most and is closed after the idle timeout, while others are served; a request without
// Host and one with two Authorization headers get the envelope; caller text is echoed cut.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { PACKAGED_NODE_OPTIONS } from '../support/serve-variables.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../support/test-database.js';
import { sleep, waitFor } from '../scale/helpers.js';
import { call } from '../support/http-client.js';

const IDLE_TIMEOUT_MS = 3000;

/** The resident set of a process, in MiB, as the kernel counts it. */
function rssMiB(pid: number): number {
  const line = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(line?.[1] ?? Number.NaN) / 1024;
}

/** How many sockets a process holds open (its listening socket and database connections included). */
function socketCount(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:');
    } catch {
      return false;
    }
  }).length;
}

function openSocket(baseUrl: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `text` as it is on a fresh connection and reads one response (the server closes, or Content-Length ends it). */
async function exchange(baseUrl: string, text: string): Promise<RawResponse> {
  const socket = await openSocket(baseUrl);
  socket.setEncoding('latin1');
  return new Promise((resolve, reject) => {
    let raw = '';
    const finish = () => {
      const [head = '', ...rest] = raw.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: Buffer.from(rest.join('\r\n\r\n'), 'latin1').toString('utf8'),
      });
      socket.destroy();
    };
    socket.on('data', (chunk: string) => {
      raw += chunk;
      const end = raw.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(raw.slice(0, end))?.[1];
      if (end !== -1 && length !== undefined && Buffer.byteLength(raw.slice(end + 4), 'latin1') >= Number(length))
        finish();
    });
    socket.on('end', finish);
    socket.on('error', reject);
    socket.write(text);
  });
}

/** The failure envelope of a raw response, its request id matching X-Request-Id. */
function expectEnvelope(response: RawResponse, status: number, code: string, field?: string): void {
  const body = JSON.parse(response.body) as {
    success: number;
    error: { code: string; field?: string; message: string; request_id: string };
  };
  expect({ status: response.status, code: body.error.code, field: body.error.field }).toEqual({ status, code, field });
  expect(body.success).toBe(0);
  expect(body.error.request_id).toBe(response.headers['x-request-id']);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
}

describe(`pipelined requests that are never read (${TEST_ENGINE})`, () => {
  let db: TestDatabase;
  let server: ServeProcess;

  // Both idle timeouts short: responses the kernel took leave a keep-alive connection, which the
  // keep-alive timeout closes; responses stuck behind a full socket leave an idle one. Node's options
  // as every packaged way of running the service sets them: otherwise V8 sizes the young generation
  // from the host's memory (up to 128 MiB of semi-spaces on 24 GiB), and garbage not yet collected
  // there, not what the connections hold, decides the RSS peak (+107 MiB once, 23-31 MiB usually).
  const startServer = () =>
    startServeProcess(db, {
      env: {
        UGS_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
        UGS_KEEP_ALIVE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
        NODE_OPTIONS: PACKAGED_NODE_OPTIONS,
      },
    });

  beforeAll(async () => {
    db = await createTestDatabase(TEST_ENGINE);
    server = await startServer();
  });

  /** Warms up what every request touches, so that a baseline is the server at work, not at rest. */
  async function warmUp(target: ServeProcess): Promise<void> {
    for (const path of ['/openapi.json', '/metrics', '/healthz']) {
      expect(
        (await exchange(target.baseUrl, `GET ${path} HTTP/1.1\r\nHost: warm-up\r\nConnection: close\r\n\r\n`)).status,
      ).toBe(200);
    }
  }

  afterAll(async () => {
    await stopAllServeProcesses();
    await db?.drop();
  });

  /** `connections` sockets that each send `requests` pipelined GETs of /openapi.json or /metrics in one write and never read. */
  async function attack(connections: number, requests: number, target = server): Promise<Socket[]> {
    return Promise.all(
      Array.from({ length: connections }, async (_, index) => {
        const socket = await openSocket(target.baseUrl);
        // Never read: no 'data' listener, so the socket stays paused and the kernel buffers fill up.
        socket.on('error', () => undefined);
        const path = index % 2 === 0 ? '/openapi.json' : '/metrics';
        socket.write(`GET ${path} HTTP/1.1\r\nHost: attack\r\n\r\n`.repeat(requests));
        return socket;
      }),
    );
  }

  /** The peak RSS growth over `baseline` while sampling for 4 s, checking /healthz answers meanwhile. */
  async function peakGrowthWhileServing(baseline: number, target = server): Promise<number> {
    let peak = baseline;
    for (let sample = 0; sample < 16; sample += 1) {
      await sleep(250);
      peak = Math.max(peak, rssMiB(target.pid));
      if (sample % 4 === 0) expect((await call(target, { method: 'GET', path: '/healthz' })).status).toBe(200);
    }
    return peak - baseline;
  }

  it('40 connections × 1 000 pipelined GET /openapi.json and /metrics: memory stays bounded, /healthz answers, the flooding connections are closed', async () => {
    await warmUp(server);
    const baseline = rssMiB(server.pid);
    const socketsBefore = socketCount(server.pid);
    const attackers = await attack(40, 1000);
    const growth = await peakGrowthWhileServing(baseline);
    // Unbounded, this reached 1.2 GB here (1.5 GB in the review) and /healthz took 29 s to answer.
    expect(growth, `RSS ${baseline.toFixed(0)} MiB at rest, +${growth.toFixed(0)} MiB at the peak`).toBeLessThan(150);
    // More requests waiting than a connection may queue: the server closes it (the client never reads, never closes).
    await waitFor('the server to close the flooding connections', 30_000, () =>
      socketCount(server.pid) <= socketsBefore + 1 ? true : undefined,
    );
    for (const socket of attackers) socket.destroy();
  });

  it('40 connections × 60 pipelined requests that are never read: bounded, and closed after the idle timeout', async () => {
    // A server of its own, so that no earlier test's heap is in the baseline.
    const fresh = await startServer();
    await warmUp(fresh);
    const baseline = rssMiB(fresh.pid);
    const socketsBefore = socketCount(fresh.pid);
    const attackers = await attack(40, 60, fresh);
    const growth = await peakGrowthWhileServing(baseline, fresh);
    // Answered in full, these are 1 200 × 105 KiB of /openapi.json for clients that never read: what
    // the kernel's socket buffers do not take, the process held (+169 MiB once, on a loaded machine
    // whose buffers were small). A connection may now hold 256 KiB unread plus four responses, under
    // 30 MiB for the forty (pipelining.ts); 23 to 31 MiB measured.
    expect(growth, `RSS ${baseline.toFixed(0)} MiB before, +${growth.toFixed(0)} MiB at the peak`).toBeLessThan(96);
    // Within the queue bound: answered as far as the kernel's buffers take them, then nothing moves,
    // and the idle (or keep-alive) timeout closes them.
    await waitFor('the server to close the connections that do not read', 30_000, () =>
      socketCount(fresh.pid) <= socketsBefore + 1 ? true : undefined,
    );
    for (const socket of attackers) socket.destroy();
    expect((await call(fresh, { method: 'GET', path: '/healthz' })).status).toBe(200);
  });

  it('a pipelining client that reads gets every answer, in order', async () => {
    const socket = await openSocket(server.baseUrl);
    socket.setEncoding('utf8');
    let raw = '';
    socket.on('data', (chunk: string) => (raw += chunk));
    socket.write(
      Array.from(
        { length: 50 },
        (_, index) => `GET /healthz?n=${index} HTTP/1.1\r\nHost: reader\r\nX-Request-Id: pipelined-${index}\r\n\r\n`,
      ).join(''),
    );
    await waitFor('50 answers', 15_000, () => ((raw.match(/HTTP\/1\.1 200/g) ?? []).length === 50 ? true : undefined));
    const order = [...raw.matchAll(/x-request-id: (pipelined-\d+)/gi)].map((match) => match[1]);
    expect(order).toEqual(Array.from({ length: 50 }, (_, index) => `pipelined-${index}`));
    socket.destroy();
  });
});

describe(`headers, over a real socket (${TEST_ENGINE})`, () => {
  let t: TestApp;
  let baseUrl: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    t = await createTestApp({ log: { level: 'info', destination } });
    baseUrl = await t.listen();
  });

  afterAll(async () => {
    await t?.close();
  });

  it('a request without Host gets 400 with the envelope and X-Request-Id', async () => {
    for (const path of ['/healthz', '/api/user?user_group_id=x']) {
      const response = await exchange(baseUrl, `GET ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`);
      expectEnvelope(response, 400, 'bad_request', 'Host');
    }
    // HTTP/1.0 has no Host to send.
    const old = await exchange(baseUrl, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
  });

  it('two Authorization headers are 401 unauthenticated, whichever of them is valid', async () => {
    const valid = t.tokens.default.Customer.write;
    for (const [first, second] of [
      [valid, valid],
      [valid, 'ugs_live_0000'],
      ['ugs_live_0000', valid],
    ]) {
      const response = await exchange(
        baseUrl,
        `GET /api/user?user_group_id=two-headers HTTP/1.1\r\nHost: a\r\nAuthorization: Token ${first}\r\nauthorization: Token ${second}\r\nConnection: close\r\n\r\n`,
      );
      expectEnvelope(response, 401, 'unauthenticated');
      expect(response.headers['www-authenticate']).toBe('Token');
    }
    expect(
      await t.runtime.store.findUserGroupByProvidedId(
        { workspaceId: t.runtime.defaultWorkspace.id, environment: 'Customer' },
        'two-headers',
      ),
    ).toBeNull();
  });

  it('caller text is cut to 256 characters in answers and logs, whatever its size', async () => {
    const long = 'z'.repeat(12_000);
    const token = t.tokens.default.Customer.write;
    const requests = [
      `GET /${long} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`,
      `GET /api/user?${long}=1 HTTP/1.1\r\nHost: a\r\nAuthorization: Token ${token}\r\nConnection: close\r\n\r\n`,
      `GET /healthz HTTP/1.1\r\nHost: a\r\nX-Request-Id: ${long}\r\nConnection: close\r\n\r\n`,
      `GET /api/user HTTP/1.1\r\nHost: a\r\nAuthorization: Token ${long}\r\nConnection: close\r\n\r\n`,
      `PUT /api/user HTTP/1.1\r\nHost: a\r\nAuthorization: Token ${token}\r\nIdempotency-Key: ${long}\r\nContent-Type: application/json\r\nContent-Length: 22\r\nConnection: close\r\n\r\n{"user_group_id":"zz"}`,
      `PUT /api/user HTTP/1.1\r\nHost: a\r\nAuthorization: Token ${token}\r\nContent-Type: application/${long}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
    ];
    for (const text of requests) {
      const response = await exchange(baseUrl, text);
      // Refused, or (the request id) replaced by one of the service's own.
      expect(response.status, text.slice(0, 60)).toBeLessThan(500);
      expect(response.body.length, response.body.slice(0, 300)).toBeLessThan(1024);
      for (const value of Object.values(response.headers)) expect(value.length).toBeLessThanOrEqual(256);
    }
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) expect(line.length, line.slice(0, 300)).toBeLessThan(2048);
  });
});
