/*
 * Every input is answered (docs/api.md#wire-conventions): input the service cannot represent exactly is refused with the
 * envelope and a 4xx, never altered, never a 5xx, and changes nothing. Each case here is one that an
 * outside review found answered with a 500 or stored altered.
 */
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_LIVE_KEYS_PER_TOKEN } from '../../src/domain/idempotency/idempotency.service.js';
import type { TestApp } from '../support/test-app.js';
import { withPostgresClient } from '../support/test-database.js';
import {
  expectError,
  expectSuccess,
  expectUnchanged,
  seedDataSource,
  seedSchema,
  TRANSPORTS,
  useClient,
} from '../http/helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { adminCaller, apiToken } from '../support/callers.js';
import { type UnsignedRequest } from '../support/http-client.js';
import { makeGroup, type UserGroup } from '../support/group-maker.js';
import { USER_PATH, VERIFY_PATH } from '../support/user-group-api.js';

/** `{"properties": {"a": {"a": … }}}` nested `levels` deep, built as text: no recursion anywhere. */
function deepBody(levels: number, opener = '{"a":', closer = '}'): string {
  return `{"user_group_id":"deep","properties":${opener.repeat(levels - 1)}{}${closer.repeat(levels - 1)}}`;
}

const AUDIT_PATH = '/api/admin/audit_events';
const GROUPS_PATH = '/api/admin/user_groups';

for (const transport of TRANSPORTS) {
  describe(`hostile input over ${transport.name}`, () => {
    const fixture = useClient(transport);
    let group: UserGroup;
    let schemaId: number;

    beforeAll(async () => {
      const { t } = fixture;
      schemaId = await seedSchema(t);
      await seedDataSource(t, schemaId);
      group = await makeGroup(t, { id: uniqueId('hostile') });
    });

    const send = (request: UnsignedRequest, scope: 'read' | 'write' | 'admin' = 'admin') =>
      fixture.client({ ...request, token: apiToken(fixture.t, { scope }) });
    /** Sends the request and asserts the error envelope and that nothing changed. */
    const expectRefused = (request: UnsignedRequest, status: number, code: string, field?: string | null) =>
      expectUnchanged(fixture.t, async () => {
        const res = await send(request);
        expectError(res, status, code, field);
        return res;
      });

    describe('nesting, however deep, is refused without recursion', () => {
      for (const method of ['GET', 'PUT']) {
        it(`${method} /api/user with properties 5 000 levels deep is 400 naming properties`, async () => {
          await expectRefused({ method, path: USER_PATH, rawBody: deepBody(5000) }, 400, 'invalid_field', 'properties');
        });
        it(`${method} /api/user with properties 5 000 arrays deep is 400 naming properties`, async () => {
          await expectRefused(
            { method, path: USER_PATH, rawBody: deepBody(5000, '{"a":[', ']}') },
            400,
            'invalid_field',
            'properties',
          );
        });
      }
      it('an Idempotency-Key does not make a deep body recurse (the request fingerprint)', async () => {
        const request = {
          method: 'PUT',
          path: USER_PATH,
          rawBody: deepBody(5000),
          headers: { 'idempotency-key': uniqueId('deep') },
        };
        await expectRefused(request, 400, 'invalid_field', 'properties');
      });
      it('deep nesting under any other field is 400 naming it', async () => {
        await expectRefused(
          {
            method: 'PUT',
            path: USER_PATH,
            rawBody: `{"user_group_id":"x","mapping":${'['.repeat(5000)}${']'.repeat(5000)}}`,
          },
          400,
          'invalid_field',
          'mapping',
        );
      });
      it('a deep document as the whole body is 400', async () => {
        const res = await expectRefused(
          { method: 'PUT', path: USER_PATH, rawBody: `${'['.repeat(5000)}${']'.repeat(5000)}` },
          400,
          'invalid_json',
        );
        expect(res.body.error.message).toMatch(/object/);
      });
      it('properties in the query string, as deep as a URL can carry (2 000 levels), are 400 naming properties', async () => {
        const properties = `{"a":${'['.repeat(2000)}${']'.repeat(2000)}}`;
        await expectRefused(
          { method: 'GET', path: `${USER_PATH}?user_group_id=deep&properties=${encodeURIComponent(properties)}` },
          400,
          'invalid_field',
          'properties',
        );
      });
    });

    describe('numbers in properties must round-trip exactly', () => {
      for (const number of [
        '1e400',
        '-1e400',
        '12345678901234567890',
        '9007199254740992',
        '-9007199254740992',
        '1e300',
      ]) {
        it(`${number} is 400 naming properties, in the body and in the query`, async () => {
          await expectRefused(
            {
              method: 'PUT',
              path: USER_PATH,
              rawBody: `{"user_group_id":"${group.provided_id}","properties":{"n":{"m":[${number}]}}}`,
            },
            400,
            'invalid_field',
            'properties',
          );
          const properties = encodeURIComponent(`{"n":${number}}`);
          await expectRefused(
            { method: 'GET', path: `${USER_PATH}?user_group_id=${group.provided_id}&properties=${properties}` },
            400,
            'invalid_field',
            'properties',
          );
        });
      }
      it('the largest safe integers and ordinary fractions come back exactly', async () => {
        const rawBody = `{"user_group_id":"${group.provided_id}","properties":{"max":9007199254740991,"min":-9007199254740991,"f":0.1,"e":1.5e-300}}`;
        const body = expectSuccess(await send({ method: 'PUT', path: USER_PATH, rawBody }));
        expect(body.user_group.properties).toEqual({
          max: 9007199254740991,
          min: -9007199254740991,
          f: 0.1,
          e: 1.5e-300,
        });
      });
    });

    describe('text is UTF-8, without lone surrogates', () => {
      it('a lone surrogate escape in a body is 400 invalid_json, wherever it is', async () => {
        for (const rawBody of [
          `{"user_group_id":"\\ud800"}`,
          `{"user_group_id":"x\\udfffy"}`,
          `{"user_group_id":"ok","name":"\\ud83d"}`,
          `{"user_group_id":"ok","properties":{"k":["\\udc00"]}}`,
          `{"user_group_id":"ok","properties":{"\\ud800":1}}`,
        ]) {
          await expectRefused({ method: 'GET', path: USER_PATH, rawBody }, 400, 'invalid_json');
        }
      });
      it('a well-formed surrogate pair is accepted as the character it encodes', async () => {
        const body = expectSuccess(
          await send(
            { method: 'GET', path: USER_PATH, rawBody: `{"user_group_id":"${uniqueId('pair')}\\ud83d\\ude00"}` },
            'write',
          ),
        );
        expect(body.user_group.provided_id).toMatch(/😀$/u);
      });
      it('bytes that are not UTF-8 in a body are 400 invalid_json', async () => {
        for (const bytes of [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf8, 0x88, 0x80, 0x80, 0x80]]) {
          const rawBody = Buffer.concat([Buffer.from('{"user_group_id":"a'), Buffer.from(bytes), Buffer.from('"}')]);
          await expectRefused({ method: 'GET', path: USER_PATH, rawBody }, 400, 'invalid_json');
        }
      });
      it('an escaped lone surrogate or bytes that are not UTF-8 in a query value are 400 invalid_field naming it', async () => {
        await expectRefused(
          { method: 'GET', path: `${USER_PATH}?user_group_id=%ED%A0%80` },
          400,
          'invalid_field',
          'user_group_id',
        );
        await expectRefused(
          { method: 'GET', path: `${USER_PATH}?user_group_id=a%FF` },
          400,
          'invalid_field',
          'user_group_id',
        );
        await expectRefused(
          { method: 'GET', path: `${USER_PATH}?user_group_id=a&properties=${encodeURIComponent('{"k":"\\ud800"}')}` },
          400,
          'invalid_field',
          'properties',
        );
        await expectRefused({ method: 'GET', path: `${GROUPS_PATH}?q=%C3` }, 400, 'invalid_field', 'q');
        await expectRefused({ method: 'GET', path: `${AUDIT_PATH}?action=%80` }, 400, 'invalid_field', 'action');
      });
    });

    describe('NUL is refused in every text field and query value', () => {
      it('NUL in q, action or cursor is 400 naming it', async () => {
        await expectRefused({ method: 'GET', path: `${GROUPS_PATH}?q=%00` }, 400, 'invalid_field', 'q');
        await expectRefused({ method: 'GET', path: `${GROUPS_PATH}?q=a%00b` }, 400, 'invalid_field', 'q');
        await expectRefused(
          { method: 'GET', path: `${AUDIT_PATH}?action=user_group.created%00` },
          400,
          'invalid_field',
          'action',
        );
        await expectRefused({ method: 'GET', path: `${AUDIT_PATH}?cursor=%00` }, 400, 'invalid_field', 'cursor');
      });
      it('NUL in a token field is 400 naming it', async () => {
        await expectRefused(
          { method: 'POST', path: USER_PATH, body: { current_token: `${group.token}\u0000` } },
          400,
          'invalid_field',
          'current_token',
        );
        await expectRefused(
          { method: 'POST', path: VERIFY_PATH, body: { token: `\u0000${group.token}` } },
          400,
          'invalid_field',
          'token',
        );
        await expectRefused(
          { method: 'DELETE', path: USER_PATH, body: { current_token: '\u0000' } },
          400,
          'invalid_field',
          'current_token',
        );
      });
      it('NUL inside properties is refused naming properties', async () => {
        await expectRefused(
          { method: 'PUT', path: USER_PATH, body: { user_group_id: group.provided_id, properties: { k: 'a\u0000b' } } },
          400,
          'invalid_field',
          'properties',
        );
        await expectRefused(
          { method: 'PUT', path: USER_PATH, body: { user_group_id: group.provided_id, properties: { 'a\u0000': 1 } } },
          400,
          'invalid_field',
          'properties',
        );
      });
    });

    describe('one meaning only', () => {
      it('a JSON object with the same key twice is 400 invalid_json, at any depth', async () => {
        for (const rawBody of [
          `{"user_group_id":"a","user_group_id":"b"}`,
          `{"user_group_id":"a","user_group_id":"a"}`,
          `{"user_group_id":"a","\\u0075ser_group_id":"b"}`,
          `{"user_group_id":"a","properties":{"k":1,"k":2}}`,
          `{"user_group_id":"a","properties":{"l":[{"k":1,"j":{},"k":1}]}}`,
        ]) {
          await expectRefused({ method: 'GET', path: USER_PATH, rawBody }, 400, 'invalid_json');
        }
        await expectRefused(
          { method: 'GET', path: `${USER_PATH}?user_group_id=a&properties=${encodeURIComponent('{"k":1,"k":2}')}` },
          400,
          'invalid_json',
          'properties',
        );
      });
      it('the same key in sibling objects is fine', async () => {
        const rawBody = `{"user_group_id":"${group.provided_id}","properties":{"a":{"k":1},"b":{"k":2},"c":[{"k":3},{"k":4}]}}`;
        expectSuccess(await send({ method: 'PUT', path: USER_PATH, rawBody }));
      });
      it('__proto__ in query-string properties is refused as in a body', async () => {
        const properties = encodeURIComponent('{"__proto__":{"admin":true}}');
        const fromQuery = await expectRefused(
          { method: 'GET', path: `${USER_PATH}?user_group_id=a&properties=${properties}` },
          400,
          'invalid_field',
        );
        const fromBody = await expectRefused(
          {
            method: 'GET',
            path: USER_PATH,
            rawBody: '{"user_group_id":"a","properties":{"__proto__":{"admin":true}}}',
          },
          400,
          'invalid_field',
        );
        expect(fromQuery.body.error.message).toBe(fromBody.body.error.message);
        const constructor = encodeURIComponent('{"constructor":{"prototype":{"admin":true}}}');
        await expectRefused(
          { method: 'GET', path: `${USER_PATH}?user_group_id=a&properties=${constructor}` },
          400,
          'invalid_field',
        );
      });
    });

    describe('timestamps are RFC 3339', () => {
      for (const since of [
        '2016-12-31T23:59:60Z',
        '2026-11-24T10:00:60+01:00',
        '2026-02-30T10:00:00Z',
        '2026-11-24',
        '2026-11-24 10:00:00Z',
        'yesterday',
      ]) {
        it(`since=${since} is 400 naming since; so is until`, async () => {
          await expectRefused(
            { method: 'GET', path: `${AUDIT_PATH}?since=${encodeURIComponent(since)}` },
            400,
            'invalid_field',
            'since',
          );
          await expectRefused(
            { method: 'GET', path: `${AUDIT_PATH}?until=${encodeURIComponent(since)}` },
            400,
            'invalid_field',
            'until',
          );
        });
      }
      it('offsets and fractions are accepted', async () => {
        for (const since of ['2026-11-24T10:00:00Z', '2026-11-24t10:00:00.123456+05:30', '2026-11-24T10:00:00-00:00']) {
          expectSuccess(await send({ method: 'GET', path: `${AUDIT_PATH}?since=${encodeURIComponent(since)}` }));
        }
      });
    });

    describe('a provided id of digits too large for an id', () => {
      it('is looked up as a provided id, in a mapping and in DELETE', async () => {
        const { t } = fixture;
        const providedId = '12345678901234567890';
        const absent = await send({
          method: 'PUT',
          path: USER_PATH,
          body: { user_group_id: group.provided_id, mapping: { [schemaId]: '98765432109876543210' } },
        });
        expectError(absent, 400, 'unknown_data_source', 'mapping');
        const caller = await adminCaller(t);
        const dataSource = await t.runtime.services.dataSources.createDataSource(caller, {
          providedId,
          name: 'digits',
          schemaId,
        });
        const mapped = expectSuccess(
          await send({
            method: 'PUT',
            path: USER_PATH,
            body: { user_group_id: group.provided_id, mapping: { [schemaId]: providedId } },
          }),
        );
        expect(mapped.user_group.mapping).toEqual({ [schemaId]: String(dataSource.id) });
        const deleted = await send(
          {
            method: 'DELETE',
            path: USER_PATH,
            body: { user_group_id: uniqueId('absent'), data_source_provided_id: '98765432109876543210' },
          },
          'write',
        );
        expect(deleted.status).toBeLessThan(500);
      });
    });

    describe('callers cannot make the service keep or echo unbounded text', () => {
      it('an unknown field name of 1 MiB is cut to 256 characters in the answer', async () => {
        const name = 'f'.repeat(1024 * 1024 - 64);
        const res = await expectRefused(
          { method: 'GET', path: USER_PATH, rawBody: `{"user_group_id":"a","${name}":1}` },
          400,
          'unknown_field',
        );
        expect(res.raw.length).toBeLessThan(2000);
        expect(res.body.error.field).toBe('f'.repeat(256));
      });
      it('Idempotency-Key is ignored on verify: nothing is kept and a repeat is answered afresh', async () => {
        const key = uniqueId('verify-key');
        const first = await expectUnchanged(fixture.t, () =>
          send(
            { method: 'POST', path: VERIFY_PATH, body: { token: group.token }, headers: { 'idempotency-key': key } },
            'read',
          ),
        );
        expectSuccess(first);
        expect(first.headers['idempotent-replayed']).toBeUndefined();
        const other = await send(
          { method: 'POST', path: VERIFY_PATH, body: { token: 'ugt_nope' }, headers: { 'idempotency-key': key } },
          'read',
        );
        expect(other.status).toBe(404);
        expect(other.headers['idempotent-replayed']).toBeUndefined();
      });
    });
  });
}

/** Fills the idempotency_keys table straight, as 9 999 earlier requests would have: through the API it would take minutes. */
async function insertLiveKeys(t: TestApp, apiTokenId: number, count: number): Promise<void> {
  const createdAt = new Date().toISOString();
  if (t.db.engine === 'sqlite') {
    const connection = new Database(t.db.sqlitePath!);
    try {
      const insert = connection.prepare(
        "INSERT INTO idempotency_keys (api_token_id, key_hash, fingerprint, created_at) VALUES (?, ?, 'f', ?)",
      );
      connection.transaction(() => {
        for (let index = 0; index < count; index += 1) insert.run(apiTokenId, `filler-${index}`, createdAt);
      })();
    } finally {
      connection.close();
    }
    return;
  }
  await withPostgresClient(
    (client) =>
      client.query(
        "INSERT INTO idempotency_keys (api_token_id, key_hash, fingerprint, created_at) SELECT $1, 'filler-' || n, 'f', $2 FROM generate_series(1, $3) AS n",
        [apiTokenId, createdAt, count],
      ),
    t.db.url,
  );
}

describe('live Idempotency-Keys per API token', () => {
  const fixture = useClient(TRANSPORTS[0]!);

  it(`are capped at ${MAX_LIVE_KEYS_PER_TOKEN}: a new key beyond is 429 idempotency_key_limit and changes nothing; keys held still replay`, async () => {
    const { t, client } = fixture;
    const token = apiToken(t, { scope: 'write' });
    const group = await makeGroup(t, { id: uniqueId('capped') });
    const update = (key: string, step: number) =>
      client({
        method: 'PUT',
        path: USER_PATH,
        token,
        body: { user_group_id: group.provided_id, properties: { step } },
        headers: { 'idempotency-key': key },
      });
    const first = expectSuccess(await update('first-key', 1));
    const [held] = await (
      await t.reader()
    ).select<{ api_token_id: number }>('SELECT api_token_id FROM idempotency_keys');
    await insertLiveKeys(t, held!.api_token_id, MAX_LIVE_KEYS_PER_TOKEN - 2);
    expectSuccess(await update('last-key', 2));

    const refused = await expectUnchanged(t, () => update('one-too-many', 3));
    expectError(refused, 429, 'idempotency_key_limit', 'Idempotency-Key');
    const replay = await update('first-key', 1);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(expectSuccess(replay)).toEqual(first);
    // Without a key, or with another token, work goes on.
    expectSuccess(
      await client({
        method: 'PUT',
        path: USER_PATH,
        token,
        body: { user_group_id: group.provided_id, properties: { step: 3 } },
      }),
    );
    const admin = apiToken(t, { scope: 'admin' });
    expectSuccess(
      await client({
        method: 'PUT',
        path: USER_PATH,
        token: admin,
        body: { user_group_id: group.provided_id, properties: { step: 4 } },
        headers: { 'idempotency-key': 'one-too-many' },
      }),
    );
  });
});
