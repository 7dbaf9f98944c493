import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ABANDONED_CLAIM_MS, IDEMPOTENCY_RECORD_TTL_MS } from '../../src/domain/idempotency/idempotency.service.js';
import { inject, send, type ApiRequest, type ApiResponse, type Client } from '../support/http-client.js';
import { createTestApp, type TestApp, useTestApp } from '../support/test-app.js';
import { expectError, expectSuccess, expectUnchanged, JSON_CONTENT_TYPE, TRANSPORTS, useClient } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { apiToken } from '../support/callers.js';
import { makeGroup } from '../support/group-maker.js';
import { USER_PATH, VERIFY_PATH } from '../support/user-group-api.js';

/** The request with an Idempotency-Key (and, when given, its own X-Request-Id). */
function keyed(req: ApiRequest, key: string, requestId?: string): ApiRequest {
  return {
    ...req,
    headers: { ...req.headers, 'idempotency-key': key, ...(requestId ? { 'x-request-id': requestId } : {}) },
  };
}

const rotation = (token: string, currentToken: string): ApiRequest => ({
  method: 'POST',
  path: USER_PATH,
  token,
  body: { current_token: currentToken },
});

function expectFirstRun(res: ApiResponse): void {
  expect(res.headers['idempotent-replayed']).toBeUndefined();
}

/** The stored response again, to the letter, under the retry's own request id. */
function expectReplayOf(first: ApiResponse, replay: ApiResponse, requestId: string): void {
  expect({ status: replay.status, raw: replay.raw }).toEqual({ status: first.status, raw: first.raw });
  expect(replay.headers['idempotent-replayed']).toBe('true');
  expect(replay.headers['content-type']).toBe(JSON_CONTENT_TYPE);
  expect(replay.headers['x-request-id']).toBe(requestId);
  expect(replay.headers['cache-control']).toBe('no-store');
}

async function countRows(t: TestApp, from: string, ...params: unknown[]): Promise<number> {
  return (await t.reader()).count(from, ...params);
}

const countAudit = (t: TestApp, action: string, providedId: string) =>
  countRows(t, 'audit_events WHERE action = ? AND provided_id = ?', action, providedId);

describe.each(TRANSPORTS)('Idempotency-Key replays over $name', (transport) => {
  const ctx = useClient(transport);
  const call: Client = (req) => ctx.client(req);
  const write = () => apiToken(ctx.t, { scope: 'write' });

  it('answers a retried rotation with the first response: the same new token, one rotation', async () => {
    const group = await makeGroup(ctx.t);
    const key = uniqueId('rotate');
    const first = await call(keyed(rotation(write(), group.token), key, 'first-try'));
    const newToken = expectSuccess(first).user_group.token as string;
    expect(newToken).not.toBe(group.token);
    expectFirstRun(first);

    const retry = await call(keyed(rotation(write(), group.token), key, 'second-try'));
    expectReplayOf(first, retry, 'second-try');
    expect(await countAudit(ctx.t, 'user_group.token_rotated', group.provided_id)).toBe(1);
    const verified = await call({ method: 'POST', path: VERIFY_PATH, token: write(), body: { token: newToken } });
    expect(expectSuccess(verified).user_group.team_id).toBe(group.team_id);
  });

  it('answers a retried update with the first response, even after another change', async () => {
    const group = await makeGroup(ctx.t);
    const key = uniqueId('update');
    const update = (name: string): ApiRequest => ({
      method: 'PUT',
      path: USER_PATH,
      token: write(),
      body: { user_group_id: group.provided_id, name },
    });
    const first = await call(keyed(update('First'), key));
    expect(expectSuccess(first).user_group.name).toBe('First');
    expectSuccess(await call(update('Second')));

    const retry = await call(keyed(update('First'), key, 'update-retry'));
    expectReplayOf(first, retry, 'update-retry');
    // The retry changed nothing: the group keeps the later name, and there were two updates.
    expect(await countAudit(ctx.t, 'user_group.updated', group.provided_id)).toBe(2);
    const now = await call({
      method: 'GET',
      path: USER_PATH,
      token: write(),
      body: { user_group_id: group.provided_id },
    });
    expect(expectSuccess(now).user_group.name).toBe('Second');
  });

  it('answers a retried delete with its success rather than a 404', async () => {
    const group = await makeGroup(ctx.t);
    const key = uniqueId('delete');
    const remove: ApiRequest = {
      method: 'DELETE',
      path: USER_PATH,
      token: write(),
      body: { user_group_id: group.provided_id },
    };
    const first = await call(keyed(remove, key));
    expectSuccess(first);

    const retry = await call(keyed(remove, key, 'delete-retry'));
    expectReplayOf(first, retry, 'delete-retry');
    expect(await countAudit(ctx.t, 'user_group.deleted', group.provided_id)).toBe(1);
    expectError(await call(remove), 404, 'user_group_not_found');
  });

  it("answers a retried 4xx with the same 4xx, naming the retry's request id, without running it again", async () => {
    const id = uniqueId('later');
    const key = uniqueId('missing');
    const update: ApiRequest = {
      method: 'PUT',
      path: USER_PATH,
      token: write(),
      body: { user_group_id: id, name: 'Named' },
    };
    const first = await call(keyed(update, key, 'missing-1'));
    expectError(first, 404, 'user_group_not_found');
    await makeGroup(ctx.t, { id });

    const retry = await call(keyed(update, key, 'missing-2'));
    expectError(retry, 404, 'user_group_not_found');
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body.error.request_id).toBe('missing-2');
    expect({ ...retry.body.error, request_id: 'missing-1' }).toEqual(first.body.error);
    // A new key runs the request.
    expect(expectSuccess(await call(keyed(update, uniqueId('found')))).user_group.name).toBe('Named');
  });
});

describe('Idempotency-Key rules', () => {
  const ctx = useTestApp();
  const call: Client = (req) => inject(ctx.t.app, req);
  const write = () => apiToken(ctx.t, { scope: 'write' });

  it('works on the admin writes too: a retried schema creation creates one schema', async () => {
    const key = uniqueId('schema');
    const create: ApiRequest = {
      method: 'POST',
      path: '/api/admin/schemas',
      token: apiToken(ctx.t),
      body: { name: uniqueId('sales') },
    };
    const first = await call(keyed(create, key));
    expectSuccess(first);
    expectReplayOf(first, await call(keyed(create, key, 'schema-retry')), 'schema-retry');
    expect(await countRows(ctx.t, 'schemas WHERE name = ?', (create.body as { name: string }).name)).toBe(1);
  });

  it('takes the same JSON in another key order or spacing for the same request', async () => {
    const group = await makeGroup(ctx.t);
    const key = uniqueId('spacing');
    const body = { user_group_id: group.provided_id, name: 'Spaced', properties: { b: 1, a: { y: [1, 2], x: null } } };
    const first = await call(keyed({ method: 'PUT', path: USER_PATH, token: write(), body }, key));
    expectSuccess(first);
    const rawBody =
      '{ "properties" : {"a": {"x": null, "y": [1, 2]}, "b": 1},\n "name": "Spaced", "user_group_id": ' +
      JSON.stringify(group.provided_id) +
      ' }';
    expectReplayOf(
      first,
      await call(keyed({ method: 'PUT', path: `${USER_PATH}/`, token: write(), rawBody }, key, 'respaced')),
      'respaced',
    );
  });

  it('refuses the same key with another body, method or path as idempotency_key_reused, changing nothing', async () => {
    const group = await makeGroup(ctx.t);
    const key = uniqueId('reused');
    expectSuccess(
      await call(
        keyed(
          { method: 'PUT', path: USER_PATH, token: write(), body: { user_group_id: group.provided_id, name: 'One' } },
          key,
        ),
      ),
    );

    const others: ApiRequest[] = [
      { method: 'PUT', path: USER_PATH, token: write(), body: { user_group_id: group.provided_id, name: 'Two' } },
      { method: 'DELETE', path: USER_PATH, token: write(), body: { user_group_id: group.provided_id } },
    ];
    for (const other of others) {
      const res = await expectUnchanged(ctx.t, () => call(keyed(other, key)));
      expectError(res, 409, 'idempotency_key_reused', 'Idempotency-Key');
      expect(res.headers['idempotent-replayed']).toBeUndefined();
    }
  });

  it('tells requests apart by their query string too', async () => {
    const admin = apiToken(ctx.t);
    const schema = expectSuccess(
      await call({ method: 'POST', path: '/api/admin/schemas', token: admin, body: { name: uniqueId('query') } }),
    ).schema;
    const dataSource = expectSuccess(
      await call({
        method: 'POST',
        path: '/api/admin/data_sources',
        token: admin,
        body: { provided_id: uniqueId('ds'), name: 'DS', schema_id: schema.id },
      }),
    ).data_source;
    const key = uniqueId('patch');
    const patch = (environment: string): ApiRequest => ({
      method: 'PATCH',
      path: `/api/admin/data_sources/${dataSource.id}?environment=${environment}`,
      token: admin,
      body: { name: 'Renamed' },
    });
    expectSuccess(await call(keyed(patch('Customer'), key)));
    expectError(
      await expectUnchanged(ctx.t, () => call(keyed(patch('Testing'), key))),
      409,
      'idempotency_key_reused',
      'Idempotency-Key',
    );
  });

  it('keeps the keys of each API token apart', async () => {
    const group = await makeGroup(ctx.t);
    const key = uniqueId('shared');
    const first = await call(keyed(rotation(write(), group.token), key));
    const firstToken = expectSuccess(first).user_group.token as string;
    expectReplayOf(first, await call(keyed(rotation(write(), group.token), key, 'same-token')), 'same-token');
    const other = await call(keyed(rotation(apiToken(ctx.t, { scope: 'admin' }), firstToken), key));
    expectFirstRun(other);
    expect(expectSuccess(other).user_group.token).not.toBe(firstToken);
    expect(await countAudit(ctx.t, 'user_group.token_rotated', group.provided_id)).toBe(2);
  });

  it('records nothing for a request refused by validation: the key stays free', async () => {
    const group = await makeGroup(ctx.t);
    const key = uniqueId('invalid');
    const refused = await expectUnchanged(ctx.t, () =>
      call(
        keyed({ method: 'POST', path: USER_PATH, token: write(), body: { current_token: group.token, extra: 1 } }, key),
      ),
    );
    expectError(refused, 400, 'unknown_field', 'extra');
    const res = await call(keyed(rotation(write(), group.token), key));
    expectFirstRun(res);
    expectSuccess(res);
    expectReplayOf(res, await call(keyed(rotation(write(), group.token), key, 'valid-retry')), 'valid-retry');
  });

  it('refuses a malformed key with invalid_field, changing nothing', async () => {
    const group = await makeGroup(ctx.t);
    for (const key of ['', ' ', 'with space', 'x'.repeat(256), 'tab\tinside', 'caf\u00e9']) {
      const res = await expectUnchanged(ctx.t, () => call(keyed(rotation(write(), group.token), key)));
      expectError(res, 400, 'invalid_field', 'Idempotency-Key');
    }
    // The edges of the rule are accepted.
    expectSuccess(
      await call(
        keyed(
          { method: 'DELETE', path: USER_PATH, token: write(), body: { user_group_id: group.provided_id } },
          `!${'~'.repeat(254)}`,
        ),
      ),
    );
  });

  it('ignores the header on GET, which is idempotent by contract', async () => {
    const id = uniqueId('get');
    const get: ApiRequest = { method: 'GET', path: USER_PATH, token: write(), body: { user_group_id: id } };
    const res = await call(keyed(get, 'not a valid key'));
    expect(expectSuccess(res).new_user_group).toBe(true);
    expect(expectSuccess(await call(keyed(get, 'not a valid key'))).new_user_group).toBe(false);
  });

  it('keeps nothing for requests without the header', async () => {
    const before = await countRows(ctx.t, 'idempotency_keys');
    const group = await makeGroup(ctx.t);
    expectSuccess(await call(rotation(write(), group.token)));
    expect(await countRows(ctx.t, 'idempotency_keys')).toBe(before);
  });

  it('does not keep a 5xx: the retry runs again', async () => {
    const group = await makeGroup(ctx.t);
    const key = uniqueId('fault');
    const update: ApiRequest = {
      method: 'PUT',
      path: USER_PATH,
      token: write(),
      body: { user_group_id: group.provided_id, name: 'After fault' },
    };
    // An instance holding the wrong encryption key (made to start anyway, as only `ugs keys` may)
    // writes the change, then cannot show the group's token.
    const misconfigured = await createTestApp({
      database: ctx.t.db,
      encryptionKey: randomBytes(32).toString('base64'),
      requireAllKeys: false,
    });
    try {
      expectError(await inject(misconfigured.app, keyed(update, key)), 500, 'internal_error');
    } finally {
      await misconfigured.close();
    }
    const retry = await call(keyed(update, key));
    expectFirstRun(retry);
    expect(expectSuccess(retry).user_group.name).toBe('After fault');
    // This answer, a success, is the one kept.
    expectReplayOf(retry, await call(keyed(update, key, 'after-fault')), 'after-fault');
  });
});

/** Sends the request and never reads the response; `hangUp` closes the connection. */
function sendWithoutReading(baseUrl: string, req: ApiRequest): { hangUp(): void } {
  const payload = JSON.stringify(req.body);
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(payload)),
    authorization: `Token ${req.token}`,
    ...req.headers,
  };
  const outgoing = httpRequest(new URL(req.path, baseUrl), { method: req.method, headers, agent: false });
  // The hang-up is the point: its socket error is expected.
  outgoing.on('error', () => undefined);
  outgoing.end(payload);
  return { hangUp: () => outgoing.destroy() };
}

/** Retries as a client honouring Retry-After would, for as long as the first request is running. */
async function retryWhileInProgress(baseUrl: string, req: ApiRequest): Promise<ApiResponse> {
  for (;;) {
    const res = await send(baseUrl, req);
    if (res.status !== 409 || res.body.error.code !== 'idempotency_key_in_progress') return res;
    await sleep(20);
  }
}

describe('retries with one key, over a real socket', () => {
  const ctx = useTestApp();
  let baseUrl: string;
  beforeAll(async () => {
    baseUrl = await ctx.t.listen();
  });

  it('gives a client that lost the response of a rotation its new token on retry', async () => {
    const group = await makeGroup(ctx.t);
    const write = apiToken(ctx.t, { scope: 'write' });
    const key = uniqueId('lost');
    const lost = sendWithoutReading(baseUrl, keyed(rotation(write, group.token), key));
    // The client gives up once the server has the request (it has claimed the key), response or not.
    const keyHash = createHash('sha256').update(key).digest('hex');
    while ((await countRows(ctx.t, 'idempotency_keys WHERE key_hash = ?', keyHash)) === 0) await sleep(20);
    lost.hangUp();

    const retry = await retryWhileInProgress(baseUrl, keyed(rotation(write, group.token), key));
    expect(retry.headers['idempotent-replayed']).toBe('true');
    const newToken = expectSuccess(retry).user_group.token as string;
    expect(newToken).not.toBe(group.token);
    const verified = await send(baseUrl, {
      method: 'POST',
      path: VERIFY_PATH,
      token: write,
      body: { token: newToken },
    });
    expect(expectSuccess(verified).user_group.team_id).toBe(group.team_id);
    expect(await countAudit(ctx.t, 'user_group.token_rotated', group.provided_id)).toBe(1);
  });

  it('rotates once: every answer is the one rotation or idempotency_key_in_progress', async () => {
    const group = await makeGroup(ctx.t);
    const write = apiToken(ctx.t, { scope: 'write' });
    const key = uniqueId('race');
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => send(baseUrl, keyed(rotation(write, group.token), key))),
    );

    expect(await countAudit(ctx.t, 'user_group.token_rotated', group.provided_id)).toBe(1);
    const successes = responses.filter((res) => res.status === 200);
    expect(new Set(successes.map((res) => res.raw)).size).toBe(1);
    expect(successes.filter((res) => res.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    for (const res of responses.filter((each) => each.status !== 200)) {
      expectError(res, 409, 'idempotency_key_in_progress', 'Idempotency-Key');
      expect(res.headers['retry-after']).toBe('1');
    }
    // Once the first has finished, a retry gets its answer.
    const retry = await send(baseUrl, keyed(rotation(write, group.token), key, 'after-race'));
    expectReplayOf(successes[0]!, retry, 'after-race');
  });
});

describe('Idempotency-Key over time', () => {
  const start = Date.parse('2026-11-22T10:00:00.000Z');
  let now = start;
  let t: TestApp;
  const call: Client = (req) => inject(t.app, req);
  const write = () => apiToken(t, { scope: 'write' });

  beforeAll(async () => {
    t = await createTestApp({ clock: () => new Date(now).toISOString() });
  });
  afterAll(() => t.close());

  it('replays for 24 hours, then runs the request again', async () => {
    const group = await makeGroup(t);
    const key = uniqueId('day');
    const first = await call(keyed(rotation(write(), group.token), key));
    expectSuccess(first);

    now += IDEMPOTENCY_RECORD_TTL_MS - 1;
    expectReplayOf(first, await call(keyed(rotation(write(), group.token), key, 'late')), 'late');

    now += 1;
    const expired = await call(keyed(rotation(write(), group.token), key));
    expectFirstRun(expired);
    // It ran: the token it names was rotated away a day ago.
    expectError(expired, 404, 'user_group_not_found');
  });

  it('purges expired records as keyed requests come in', async () => {
    const group = await makeGroup(t);
    expectSuccess(await call(keyed(rotation(write(), group.token), uniqueId('purged'))));
    expect(await countRows(t, 'idempotency_keys')).toBeGreaterThan(1);

    now += IDEMPOTENCY_RECORD_TTL_MS;
    const fresh = uniqueId('fresh');
    expectSuccess(
      await call(
        keyed({ method: 'POST', path: '/api/admin/schemas', token: apiToken(t), body: { name: fresh } }, fresh),
      ),
    );
    expect(await countRows(t, 'idempotency_keys')).toBe(1);
  });

  it('answers in_progress while a claim runs, and lets a retry take over a claim abandoned for a minute', async () => {
    const group = await makeGroup(t);
    const key = uniqueId('crash');
    const tokens = await t.runtime.store.listApiTokens(t.runtime.defaultWorkspace.id);
    const apiTokenId = tokens.find((token) => token.name === 'write-Customer')!.id;
    // A server that claimed the key and then died: nothing will finish or release the claim.
    const crashed = await t.runtime.services.idempotency.start({ apiTokenId }, key, {
      method: 'POST',
      route: USER_PATH,
      params: {},
      query: {},
      body: { current_token: group.token },
    });
    expect(crashed.kind).toBe('execute');

    const waiting = await expectUnchanged(t, () => call(keyed(rotation(write(), group.token), key)));
    expectError(waiting, 409, 'idempotency_key_in_progress', 'Idempotency-Key');
    expect(waiting.headers['retry-after']).toBe('1');

    now += ABANDONED_CLAIM_MS;
    const takenOver = await call(keyed(rotation(write(), group.token), key));
    expectFirstRun(takenOver);
    expectSuccess(takenOver);
    expect(await countAudit(t, 'user_group.token_rotated', group.provided_id)).toBe(1);
  });
});
