// `ugs serve` as a process: first start, quickstart defaults, CLI changes seen by a running server,
// graceful shutdown and the encryption key.
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { request } from 'node:http';
import { connect, createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanUp, type Sandbox, sandbox } from '../support/cli-sandbox.js';
import { expectCleanFailure, run, runUgs } from '../support/ugs-command.js';
import { getOrCreate } from '../support/user-group-api.js';
import {
  firstStartTokensFileIn,
  LIVE_TOKEN,
  secretsIn,
  type ServeProcess,
  spawnServe,
  startServe,
  TEST_TOKEN,
} from '../support/serve-process.js';
import { sleep, waitFor } from '../support/wait-for.js';
import { send, type ApiResponse } from '../support/http-client.js';
import { expectSuccess } from '../support/success-envelope.js';

afterEach(cleanUp);

/** How long a test waits for a CLI change to reach a running server (docs/cli.md: its next request). */
const CLI_CHANGE_DEADLINE_MS = 5_000;

describe('first start', () => {
  /** Every line of stdout is a JSON log line, and none holds an API token (stdout and stderr are pipes here). */
  const expectOnlyTokenFreeJsonLines = (server: ServeProcess) => {
    const lines = server
      .stdout()
      .split('\n')
      .filter((line) => line !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    expect(server.stdout()).not.toMatch(/ugs_(live|test)_/);
    expect(server.stderr()).not.toMatch(/ugs_(live|test)_/);
  };

  it('writes one admin token per environment to a 0600 file the log names; stdout holds JSON lines only and no token', async () => {
    const box = sandbox();
    const server = await box.serve();
    expectOnlyTokenFreeJsonLines(server);
    const file = firstStartTokensFileIn(server.stdout());
    expect(file).toBe(`${box.databasePath}.first-start-tokens`);
    expect(statSync(file!).mode & 0o777).toBe(0o600);
    const text = server.firstStartText()!;
    expect(secretsIn(text, LIVE_TOKEN)).toHaveLength(1);
    expect(secretsIn(text, TEST_TOKEN)).toHaveLength(1);
    expect(text).toContain(`http://127.0.0.1:${server.port}`);
    const tokens = server.adminTokens();

    for (const environment of ['Customer', 'Testing'] as const) {
      const token = tokens[environment];
      expect((await server.request({ method: 'GET', path: '/api/admin/schemas', token })).status).toBe(200);
      const created = await getOrCreate(server, token, { user_group_id: 'example_1', name: 'Example 1' });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({
        success: 1,
        new_user_group: true,
        user_group: { provided_id: 'example_1', api_environment_tag: environment },
      });
    }
  });

  it('a second start on the same database makes no token and says so', async () => {
    const box = sandbox();
    const first = await box.serve();
    const tokens = first.adminTokens();
    expect(await first.stop()).toBe(0);

    const second = await box.serve();
    await waitFor('the log line saying no first-start tokens were made', 10_000, async () =>
      /no first-start tokens were made/.test(second.stdout()) ? true : undefined,
    );
    expectOnlyTokenFreeJsonLines(second);
    expect(firstStartTokensFileIn(second.stdout())).toBeUndefined();
    // The file is the first start's, untouched.
    expect(second.firstStartText()).toBeUndefined();
    expect(secretsIn(readFileSync(`${box.databasePath}.first-start-tokens`, 'utf8'), LIVE_TOKEN)).toEqual([
      tokens.Customer,
    ]);
  });

  it('after `ugs tokens create` on a new database, the first start makes no token and its log says admin tokens already exist', async () => {
    const box = sandbox();
    const created = await box.ugs('tokens', 'create', '--scope', 'admin', '--environment', 'Customer');
    expect(created.code, created.stderr).toBe(0);
    const server = await box.serve();
    await waitFor('the log line saying no first-start tokens were made', 10_000, async () =>
      /already has API tokens .*no first-start tokens were made/.test(server.stdout()) ? true : undefined,
    );
    expectOnlyTokenFreeJsonLines(server);
    expect(existsSync(`${box.databasePath}.first-start-tokens`)).toBe(false);
  });

  it('two servers starting together on a new database make one set of tokens between them', async () => {
    const box = sandbox();
    const servers = await Promise.all([box.serve(), box.serve()]);
    const files = servers.map((server) => firstStartTokensFileIn(server.stdout())).filter((file) => file);
    expect(files).toHaveLength(1);
    const text = readFileSync(files[0]!, 'utf8');
    expect({ live: secretsIn(text, LIVE_TOKEN).length, test: secretsIn(text, TEST_TOKEN).length }).toEqual({
      live: 1,
      test: 1,
    });
  });

  it('with --port 0 the tokens file names the port actually bound', async () => {
    const box = sandbox();
    const server = spawnServe(['--port', '0', '--database', box.databaseUrl], 1); // --port overrides UGS_PORT
    const url = await waitFor(
      'the first-start tokens file',
      15_000,
      async () => /curl -X GET (http:\/\/127\.0\.0\.1:\d+)\/api\/user/.exec(server.firstStartText() ?? '')?.[1],
    );
    expect(url).not.toMatch(/:0$/);
    expect(
      (await send(url, { method: 'GET', path: '/api/admin/schemas', token: server.adminTokens().Customer })).status,
    ).toBe(200);
  });

  it('creates the key file beside the database with mode 0600', async () => {
    const box = sandbox();
    await box.serve();
    const keyFile = `${box.databasePath}.key`;
    expect(existsSync(keyFile)).toBe(true);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
  });
});

interface CurlResult {
  status: number;
  body: Record<string, unknown>;
}

/** A request with curl, the client the README shows (a GET carries its JSON body with -X GET --data). */
async function curl(
  server: ServeProcess,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<CurlResult> {
  const result = await run('curl', [
    '-s',
    '-X',
    method,
    `${server.baseUrl}${path}`,
    '-H',
    `Authorization: Token ${token}`,
    ...(body === undefined ? [] : ['-H', 'Content-Type: application/json', '--data', JSON.stringify(body)]),
    '-w',
    '\n%{http_code}',
  ]);
  expect(result.code, result.stderr).toBe(0);
  const newline = result.stdout.lastIndexOf('\n');
  return {
    status: Number(result.stdout.slice(newline + 1)),
    body: JSON.parse(result.stdout.slice(0, newline)) as Record<string, unknown>,
  };
}

/** `ugs serve` on a fresh database and a port another process holds. */
async function serveOnTakenPort(box: Sandbox) {
  const blocker = createServer().listen(0, '127.0.0.1');
  await once(blocker, 'listening');
  const port = (blocker.address() as AddressInfo).port;
  try {
    return await runUgs(['serve', '--port', String(port), '--database', box.databaseUrl]);
  } finally {
    blocker.close();
  }
}

describe('a start that cannot listen', () => {
  it('exits non-zero with the reason on stderr', async () => {
    const failed = await serveOnTakenPort(sandbox());
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toMatch(/EADDRINUSE|in use/i);
    expect(failed.stderr).not.toMatch(/^\s+at /m);
  });

  it('does not use up the first-start tokens: they are shown once, by this start or the next', async () => {
    const box = sandbox();
    const failed = await serveOnTakenPort(box);
    expect(firstStartTokensFileIn(failed.stdout)).toBeUndefined();
    expect(existsSync(`${box.databasePath}.first-start-tokens`)).toBe(false);
    const server = await box.serve();
    expect(server.adminTokens().Customer).toMatch(/^ugs_live_/);
  });
});

describe('quickstart', () => {
  it('ugs serve with no database option creates data/ugs.db under the working directory, and the README flow works with curl', async () => {
    const cwd = sandbox().dir; // no database in it yet; nothing names one
    const server = await startServe([], { cwd });
    expect(existsSync(join(cwd, 'data', 'ugs.db'))).toBe(true);
    expect(existsSync(join(cwd, 'data', 'ugs.db.key'))).toBe(true);
    const call = (method: string, path: string, body?: unknown) =>
      curl(server, method, path, server.adminTokens().Customer, body);

    const schema = expectSuccess(await call('POST', '/api/admin/schemas', { name: 'sales' })).schema as { id: number };
    const dataSource = expectSuccess(
      await call('POST', '/api/admin/data_sources', {
        provided_id: 'warehouse_eu',
        name: 'EU warehouse',
        schema_id: schema.id,
      }),
    ).data_source as { id: number };

    const created = expectSuccess(
      await call('GET', '/api/user', {
        user_group_id: 'example_1',
        name: 'Example 1',
        mapping: { [schema.id]: 'warehouse_eu' },
        properties: { filterValue: 'value' },
      }),
    );
    expect(created).toMatchObject({
      new_user_group: true,
      user_group: {
        provided_id: 'example_1',
        name: 'Example 1',
        api_environment_tag: 'Customer',
        mapping: { [schema.id]: String(dataSource.id) },
      },
    });
    const firstToken = (created.user_group as { token: string }).token;
    expect(firstToken).toMatch(/^ugt_[0-9a-f]{64}$/);

    const fromQuery = expectSuccess(await call('GET', '/api/user?user_group_id=example_1'));
    expect(fromQuery).toMatchObject({ new_user_group: false, user_group: { token: firstToken } });

    const updated = expectSuccess(
      await call('PUT', '/api/user', {
        user_group_id: 'example_1',
        name: 'Example One',
        properties: { filterValue: 'other' },
      }),
    );
    expect(updated.user_group).toMatchObject({
      name: 'Example One',
      properties: { filterValue: 'other' },
      token: firstToken,
    });

    const rotated = expectSuccess(await call('POST', '/api/user', { current_token: firstToken }));
    const secondToken = (rotated.user_group as { token: string }).token;
    expect(secondToken).toMatch(/^ugt_[0-9a-f]{64}$/);
    expect(secondToken).not.toBe(firstToken);

    const verified = expectSuccess(await call('POST', '/api/user/verify', { token: secondToken }));
    expect(verified.user_group).toMatchObject({ provided_id: 'example_1', name: 'Example One', token: secondToken });

    expect(
      expectSuccess(
        await call('DELETE', '/api/user', { user_group_id: 'example_1', data_source_provided_id: 'warehouse_eu' }),
      ),
    ).toEqual({ success: 1 });
    expect((await call('POST', '/api/user/verify', { token: secondToken })).status).toBe(404);
  });
});

/** Repeats a get-or-create with `token` until it answers `status`, for at most CLI_CHANGE_DEADLINE_MS. */
function statusWithin(server: ServeProcess, token: string, status: number): Promise<ApiResponse> {
  return waitFor(`a ${status} answer for the token the CLI changed`, CLI_CHANGE_DEADLINE_MS, async () => {
    const response = await getOrCreate(server, token, { user_group_id: 'g1' });
    return response.status === status ? response : undefined;
  });
}

describe('CLI changes reach a running server', () => {
  it('a token created by the CLI works at once; a token revoked by the CLI is refused within 5 s', async () => {
    const box = sandbox();
    const server = await box.serve();
    const created = await box.ugs('tokens', 'create', '--environment', 'Testing', '--scope', 'write', '--json');
    expect(created.code, created.stderr).toBe(0);
    const { id, token } = JSON.parse(created.stdout) as { id: number; token: string };

    const accepted = await statusWithin(server, token, 200);
    expect(accepted.body.user_group.api_environment_tag).toBe('Testing');

    expect((await box.ugs('tokens', 'revoke', String(id))).code).toBe(0);
    const refused = await statusWithin(server, token, 401);
    expect(refused.body).toMatchObject({ success: 0, error: { code: 'invalid_api_token' } });
    expect(refused.headers['www-authenticate']).toBe('Token');
  });

  it('a schema and data source created by the CLI resolve in a mapping sent over HTTP', async () => {
    const box = sandbox();
    const server = await box.serve();
    const token = server.adminTokens().Customer;
    const schemaId = (await box.ugs('schemas', 'create', '--name', 'sales')).stdout.trim();
    const dataSourceId = (
      await box.ugs(
        'data-sources',
        'create',
        '--provided-id',
        'ds1',
        '--name',
        'Warehouse',
        '--schema-id',
        schemaId,
        '--environment',
        'Customer',
      )
    ).stdout.trim();
    expect(schemaId).toMatch(/^[1-9][0-9]*$/);
    expect(dataSourceId).toMatch(/^[1-9][0-9]*$/);

    const created = await getOrCreate(server, token, { user_group_id: 'mapped', mapping: { [schemaId]: 'ds1' } });
    expect(created.status, created.raw).toBe(200);
    expect(created.body.user_group.mapping).toEqual({ [schemaId]: dataSourceId });
  });

  it('a token created by the CLI in another workspace acts only there', async () => {
    const box = sandbox();
    const server = await box.serve();
    const defaultToken = server.adminTokens().Customer;
    expect((await box.ugs('workspaces', 'create', 'acme')).code).toBe(0);
    const acmeToken = (
      await box.ugs('tokens', 'create', '--workspace', 'acme', '--environment', 'Customer', '--scope', 'write')
    ).stdout.trim();

    expect((await getOrCreate(server, defaultToken, { user_group_id: 'shared_id' })).body.new_user_group).toBe(true);
    const inAcme = await getOrCreate(server, acmeToken, { user_group_id: 'shared_id' });
    expect(inAcme.status).toBe(200);
    expect(inAcme.body.new_user_group).toBe(true);
  });
});

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET /api/user sent with half its body, on a connection of its own, so that it stays in flight until `finish()`. */
function heldRequest(server: ServeProcess, token: string, body: object) {
  const payload = JSON.stringify(body);
  const split = Math.floor(payload.length / 2);
  let settle: (value: RawResponse) => void;
  const response = new Promise<RawResponse>((resolvePromise) => (settle = resolvePromise));
  const outgoing = request(
    `${server.baseUrl}/api/user`,
    {
      method: 'GET',
      agent: false,
      headers: {
        authorization: `Token ${token}`,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(payload)),
      },
    },
    (incoming) => {
      let text = '';
      incoming.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      incoming.on('end', () => settle({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: text }));
    },
  );
  outgoing.on('error', (error) => settle({ status: 0, headers: {}, body: String(error) }));
  outgoing.write(payload.slice(0, split));
  return { response, finish: () => outgoing.end(payload.slice(split)) };
}

/**
 * A GET /api/user written by hand on a connection of its own: its request line now, the rest on
 * `finish()`. Closing the server closes the connections that are idle, and Node 26 counts one that
 * has sent nothing yet as idle (Node 22 and 24 kept it open): a connection whose request has begun
 * is open on every line, as is a client's that was writing when the drain began.
 */
async function begunRequest(server: ServeProcess, token: string, body: object) {
  const socket = connect(server.port, '127.0.0.1');
  await once(socket, 'connect');
  let raw = '';
  socket.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
  const closed = once(socket, 'close');
  socket.write('GET /api/user HTTP/1.1\r\n');
  const payload = JSON.stringify(body);
  const rest = [
    `Host: 127.0.0.1:${server.port}`,
    `Authorization: Token ${token}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(payload)}`,
    '',
    payload,
  ];
  // The server answers with Connection: close, so the whole response is in once the socket closes.
  const response = closed.then((): RawResponse => {
    const headEnd = raw.indexOf('\r\n\r\n');
    const [statusLine = '', ...headerLines] = raw.slice(0, headEnd).split('\r\n');
    const headers = Object.fromEntries(
      headerLines.map((line) => [
        line.slice(0, line.indexOf(':')).trim().toLowerCase(),
        line.slice(line.indexOf(':') + 1).trim(),
      ]),
    );
    return { status: Number(statusLine.split(' ')[1]), headers, body: raw.slice(headEnd + 4) };
  });
  return { response, finish: () => socket.write(rest.join('\r\n')) };
}

/** A server with one request in flight (its body held back), ready to be sent SIGTERM. */
async function drainingServer() {
  const box = sandbox();
  const server = await box.serve();
  const token = server.adminTokens().Customer;
  const held = heldRequest(server, token, { user_group_id: 'held', name: 'Held' });
  // The server has authenticated the held request (so it is in flight) once the token shows a use.
  await waitFor('the server to read the held request', 10_000, async () => {
    const listed = JSON.parse((await box.ugs('tokens', 'list', '--json')).stdout) as Array<{
      last_used_at: string | null;
    }>;
    return listed.some((apiToken) => apiToken.last_used_at !== null) ? true : undefined;
  });
  return { box, server, token, held };
}

describe('graceful shutdown', () => {
  it('SIGTERM lets in-flight requests finish, exits 0 and leaves an intact database', async () => {
    const { box, server, token, held } = await drainingServer();
    const burst = Array.from({ length: 100 }, (_, index) =>
      getOrCreate(server, token, { user_group_id: `burst_${index}` }).then(
        (response) => ({ id: `burst_${index}`, status: response.status, error: undefined }),
        (error: NodeJS.ErrnoException) => ({ id: `burst_${index}`, status: 0, error: error.code }),
      ),
    );
    await Promise.race(burst); // the server is busy with the burst
    const signalledAt = Date.now();
    server.process.kill('SIGTERM');
    await sleep(300);
    held.finish();

    const heldResponse = await held.response;
    expect(heldResponse.status, heldResponse.body).toBe(200);
    expect(JSON.parse(heldResponse.body)).toMatchObject({
      success: 1,
      new_user_group: true,
      user_group: { provided_id: 'held' },
    });

    expect(await server.exited).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(5_000);

    // A request the server had taken is answered 200. One it had not yet read when the drain began
    // is answered 503, and one still in the listen backlog finds its connection reset or refused.
    const outcomes = await Promise.all(burst);
    for (const outcome of outcomes) {
      if (outcome.status === 0) expect(['ECONNREFUSED', 'ECONNRESET']).toContain(outcome.error);
      else expect([200, 503]).toContain(outcome.status);
    }
    expect(outcomes.some((outcome) => outcome.status === 200)).toBe(true);

    const db = new Database(box.databasePath, { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const stored = new Set(
        (db.prepare('SELECT provided_id FROM user_groups').all() as Array<{ provided_id: string }>).map(
          (row) => row.provided_id,
        ),
      );
      for (const id of ['held', ...outcomes.filter((outcome) => outcome.status === 200).map((outcome) => outcome.id)])
        expect(stored).toContain(id);
    } finally {
      db.close();
    }
  });

  it('a request arriving on an open connection during the drain gets the 503 error envelope', async () => {
    const { server, token, held } = await drainingServer();
    const late = await begunRequest(server, token, { user_group_id: 'late' });
    server.process.kill('SIGTERM');
    await sleep(300);

    late.finish();
    const lateResponse = await late.response;
    held.finish();
    expect((await held.response).status).toBe(200);
    expect(await server.exited).toBe(0);

    // Every response carries X-Request-Id; a failure is the error envelope; 503 sends Retry-After.
    expect({
      status: lateResponse.status,
      headers: lateResponse.headers,
      body: JSON.parse(lateResponse.body) as unknown,
    }).toMatchObject({
      status: 503,
      headers: { 'x-request-id': expect.any(String), 'retry-after': expect.stringMatching(/^[0-9]+$/) },
      body: { success: 0, error: { code: 'unavailable', message: expect.any(String), request_id: expect.any(String) } },
    });
  });
});

describe('encryption key', () => {
  it('with UGS_ENCRYPTION_KEY set no key file is created, and group tokens survive a restart with the same key', async () => {
    const box = sandbox();
    const env = { UGS_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
    const first = await box.serve({ env });
    const token = first.adminTokens().Customer;
    const created = await getOrCreate(first, token, { user_group_id: 'kept' });
    expect(created.status).toBe(200);
    expect(await first.stop()).toBe(0);

    const second = await box.serve({ env });
    const again = await getOrCreate(second, token, { user_group_id: 'kept' });
    expect(again.body).toMatchObject({ new_user_group: false, user_group: { token: created.body.user_group.token } });
    expect(readdirSync(box.dir).filter((name) => name.endsWith('.key'))).toEqual([]);
  });

  it.each([
    ['16 bytes', randomBytes(16).toString('base64')],
    ['not base64', 'this is not a key'],
  ])('an invalid UGS_ENCRYPTION_KEY (%s) stops serve with a clear message', async (_label, key) => {
    const box = sandbox();
    const result = await runUgs(['serve', '--port', '0', '--database', box.databaseUrl], {
      env: { UGS_ENCRYPTION_KEY: key },
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/UGS_ENCRYPTION_KEY/);
    expect(result.stderr).toMatch(/32 bytes/);
    expect(result.stdout).toBe('');
    expect(readdirSync(box.dir).filter((name) => name.endsWith('.key'))).toEqual([]);
  });
});

describe('server timeouts', () => {
  it('a headers timeout longer than the request timeout, or a timeout that is not a positive number, stops serve before the database is opened', async () => {
    const box = sandbox();
    expectCleanFailure(
      await box.ugs('serve', '--port', '0', '--headers-timeout-ms', '5000', '--request-timeout-ms', '1000'),
      /--headers-timeout-ms \(UGS_HEADERS_TIMEOUT_MS\) must not be longer than --request-timeout-ms/,
    );
    expectCleanFailure(
      await runUgs(['serve', '--port', '0', '--database', box.databaseUrl], {
        env: { UGS_KEEP_ALIVE_TIMEOUT_MS: '0' },
      }),
      /"0" is not a positive whole number/,
    );
    expect(existsSync(box.databasePath)).toBe(false);
  });
});

describe('cross-origin setting', () => {
  it('an origin that is not one, a wildcard or a path stops serve before the database is opened, naming the flag', async () => {
    const box = sandbox();
    expectCleanFailure(
      await box.ugs('serve', '--port', '0', '--cors-origins', 'https://app.example.com,https://*.example.com'),
      /--cors-origins.*no wildcards/,
    );
    expectCleanFailure(
      await runUgs(['serve', '--port', '0', '--database', box.databaseUrl], {
        env: { UGS_CORS_ORIGINS: 'https://app.example.com/dashboard' },
      }),
      /no path, query or credentials/,
    );
    expect(existsSync(box.databasePath)).toBe(false);
  });
});
