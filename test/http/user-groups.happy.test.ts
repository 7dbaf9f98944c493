import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/domain/tenancy.js';
import { send, type ApiRequest } from '../support/http-client.js';
import {
  expectError,
  expectSuccess,
  expectUnchanged,
  ISO_TIMESTAMP,
  JSON_CONTENT_TYPE,
  seedCatalog,
  TRANSPORTS,
  useClient,
  USER_GROUP_TOKEN,
  type Catalog,
} from './helpers.js';
import { uniqueId, uniqueNumber } from '../support/unique-id.js';
import { apiToken } from '../support/callers.js';
import { USER_PATH, userGroupApi, type UserGroupApi } from '../support/user-group-api.js';
import { useTestApp } from '../support/test-app.js';

const PROPERTIES = {
  filterValue: 'value',
  region: ['eu', 'us'],
  limits: { rows: 1000, ratio: 0.25, enabled: true, missing: null },
  unicode: 'Zürich — 東京 😀',
  nested: { a: { b: { c: [1, { d: 'deep' }] } } },
};

/** Query-string form of a GET: plain fields as they are, mapping and properties as JSON text. */
function queryOf(fields: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(fields))
    params.set(key, typeof value === 'string' ? value : JSON.stringify(value));
  return `${USER_PATH}?${params.toString()}`;
}

describe.each(TRANSPORTS)('user groups over $name', (transport) => {
  const ctx = useClient(transport);
  let catalog: Catalog;
  beforeAll(async () => {
    catalog = await seedCatalog(ctx.t);
  });

  const api = (scope: Scope = 'write', environment: 'Customer' | 'Testing' = 'Customer'): UserGroupApi =>
    userGroupApi(ctx.client, apiToken(ctx.t, { scope, environment }));

  /** Creates a group with every field set; returns the group as the response shows it. */
  async function createFullGroup(id = uniqueId('full')) {
    const body = expectSuccess(
      await api().getOrCreate({
        user_group_id: id,
        name: 'Full group',
        properties: PROPERTIES,
        mapping: { [catalog.schemaA]: catalog.dsA.id },
      }),
    );
    expect(body.new_user_group).toBe(true);
    return body.user_group;
  }

  /** The group as a read token sees it now. */
  async function current(id: string) {
    const body = expectSuccess(await api('read').getOrCreate({ user_group_id: id }));
    expect(body.new_user_group).toBe(false);
    return body.user_group;
  }

  describe('GET creates', () => {
    it('returns the whole group with every field given', async () => {
      const id = uniqueId('example');
      const res = await api().getOrCreate({
        user_group_id: id,
        name: 'Example 1',
        properties: PROPERTIES,
        mapping: { [catalog.schemaA]: catalog.dsA.id },
      });
      const body = expectSuccess(res);
      expect(body).toStrictEqual({
        success: 1,
        new_user_group: true,
        user_group: {
          team_id: expect.any(Number),
          token: expect.stringMatching(USER_GROUP_TOKEN),
          name: 'Example 1',
          provided_id: id,
          properties: PROPERTIES,
          mapping: { [String(catalog.schemaA)]: String(catalog.dsA.id) },
          parent_user_group_id: null,
          computed_properties: PROPERTIES,
          computed_mapping: { [String(catalog.schemaA)]: String(catalog.dsA.id) },
          is_demo_group: false,
          tags: [],
          access_rules: [],
          computed_access_rules: [],
          api_environment_tag: 'Customer',
          created_at: expect.stringMatching(ISO_TIMESTAMP),
          updated_at: body.user_group.created_at,
        },
      });
      expect(Number.isSafeInteger(body.user_group.team_id) && body.user_group.team_id > 0).toBe(true);
      expect(Math.abs(Date.parse(body.user_group.created_at) - Date.now())).toBeLessThan(60_000);
    });

    it('defaults: properties null, mapping {}, name the user_group_id, nothing trimmed', async () => {
      const id = `  ${uniqueId('spaced id')}  `;
      const { user_group } = expectSuccess(await api().getOrCreate({ user_group_id: id }));
      expect(user_group).toMatchObject({ provided_id: id, name: id, properties: null, mapping: {} });
    });

    it('gives every group its own team_id and token', async () => {
      const [a, b] = [await createFullGroup(), await createFullGroup()];
      expect(a.team_id).not.toBe(b.team_id);
      expect(a.token).not.toBe(b.token);
    });

    it.each([12345, 0, -7, Number.MAX_SAFE_INTEGER])(
      'turns the integer user_group_id %s into its decimal string',
      async (id) => {
        const tokenOf = async (userGroupId: unknown) =>
          expectSuccess(await api().getOrCreate({ user_group_id: userGroupId })).user_group;
        const created = await tokenOf(id);
        expect(created).toMatchObject({ provided_id: String(id), name: String(id) });
        expect(await current(String(id))).toStrictEqual(created);
      },
    );

    it.each([
      ['its id as an integer', (c: Catalog) => c.dsA.id],
      ['its id as a digit string', (c: Catalog) => String(c.dsA.id)],
      ['its provided_id', (c: Catalog) => c.dsA.providedId],
    ])('resolves a mapping that names the data source by %s', async (_label, ref) => {
      const { user_group } = expectSuccess(
        await api().getOrCreate({ user_group_id: uniqueId('mapped'), mapping: { [catalog.schemaA]: ref(catalog) } }),
      );
      expect(user_group.mapping).toStrictEqual({ [String(catalog.schemaA)]: String(catalog.dsA.id) });
    });

    it('resolves a mapping of several schemas', async () => {
      const mapping = { [catalog.schemaA]: catalog.dsA.providedId, [catalog.schemaB]: catalog.dsB.id };
      const { user_group } = expectSuccess(await api().getOrCreate({ user_group_id: uniqueId('multi'), mapping }));
      expect(user_group.mapping).toStrictEqual({
        [String(catalog.schemaA)]: String(catalog.dsA.id),
        [String(catalog.schemaB)]: String(catalog.dsB.id),
      });
    });

    it('keeps Customer and Testing apart: the same id is two groups', async () => {
      const id = uniqueId('both-envs');
      const customer = expectSuccess(await api().getOrCreate({ user_group_id: id })).user_group;
      const testing = expectSuccess(await api('write', 'Testing').getOrCreate({ user_group_id: id }));
      expect(testing.new_user_group).toBe(true);
      expect(testing.user_group.api_environment_tag).toBe('Testing');
      expect(testing.user_group.team_id).not.toBe(customer.team_id);
      expect(testing.user_group.token).not.toBe(customer.token);
    });
  });

  describe('GET on an existing group', () => {
    it.each<Scope>(['read', 'write'])(
      'with a %s token returns it unchanged and ignores the other fields',
      async (scope) => {
        const created = await createFullGroup();
        const res = await expectUnchanged(ctx.t, () =>
          api(scope).getOrCreate({
            user_group_id: created.provided_id,
            name: 'Other name',
            properties: { other: 1 },
            mapping: {},
          }),
        );
        expect(expectSuccess(res)).toStrictEqual({ success: 1, new_user_group: false, user_group: created });
      },
    );
  });

  describe('GET with the fields in the query string', () => {
    it('creates, then finds, a group without a body', async () => {
      const id = uniqueId('query');
      const fields = {
        user_group_id: id,
        name: 'Query & name',
        properties: PROPERTIES,
        mapping: { [catalog.schemaA]: catalog.dsA.providedId },
      };
      const created = expectSuccess(
        await ctx.client({ method: 'GET', path: queryOf(fields), token: apiToken(ctx.t, { scope: 'write' }) }),
      );
      expect(created.new_user_group).toBe(true);
      expect(created.user_group).toMatchObject({
        provided_id: id,
        name: 'Query & name',
        properties: PROPERTIES,
        mapping: { [String(catalog.schemaA)]: String(catalog.dsA.id) },
      });
      const again = expectSuccess(
        await ctx.client({
          method: 'GET',
          path: queryOf({ user_group_id: id }),
          token: apiToken(ctx.t, { scope: 'read' }),
        }),
      );
      expect(again).toStrictEqual({ success: 1, new_user_group: false, user_group: created.user_group });
    });
  });

  describe('PUT', () => {
    it.each([
      ['name alone', () => ({ name: 'New name' }), () => ({ name: 'New name' })],
      // A group without a parent computes its own properties and mapping (docs/api.md#hierarchy-demo-groups-and-tags).
      [
        'properties, replaced whole',
        () => ({ properties: { fresh: true } }),
        () => ({ properties: { fresh: true }, computed_properties: { fresh: true } }),
      ],
      [
        'properties null, which clears them',
        () => ({ properties: null }),
        () => ({ properties: null, computed_properties: {} }),
      ],
      ['mapping {}, which clears it', () => ({ mapping: {} }), () => ({ mapping: {}, computed_mapping: {} })],
      ['mapping null, which clears it too', () => ({ mapping: null }), () => ({ mapping: {}, computed_mapping: {} })],
      [
        'mapping, replaced whole',
        (c: Catalog) => ({ mapping: { [c.schemaB]: c.dsB.providedId } }),
        (c: Catalog) => ({
          mapping: { [String(c.schemaB)]: String(c.dsB.id) },
          computed_mapping: { [String(c.schemaB)]: String(c.dsB.id) },
        }),
      ],
      [
        'everything at once',
        (c: Catalog) => ({ name: 'All new', properties: { n: 2 }, mapping: { [c.schemaB]: c.dsB.id } }),
        (c: Catalog) => ({
          name: 'All new',
          properties: { n: 2 },
          mapping: { [String(c.schemaB)]: String(c.dsB.id) },
          computed_properties: { n: 2 },
          computed_mapping: { [String(c.schemaB)]: String(c.dsB.id) },
        }),
      ],
    ])('updates %s and leaves the absent fields as they are', async (_label, patch, changed) => {
      const before = await createFullGroup();
      const { user_group: after } = expectSuccess(
        await api().update({ user_group_id: before.provided_id, ...patch(catalog) }),
      );
      expect(after).toStrictEqual({ ...before, ...changed(catalog), updated_at: expect.stringMatching(ISO_TIMESTAMP) });
      expect(Date.parse(after.updated_at)).toBeGreaterThanOrEqual(Date.parse(before.updated_at));
      expect(await current(before.provided_id)).toStrictEqual(after);
    });

    it.each([
      ['a string', () => uniqueId('renamed'), (id: unknown) => id],
      ['an integer', () => uniqueNumber(), (id: unknown) => String(id)],
    ])('renames via new_user_group_id given as %s; the old id is then unknown', async (_label, newId, providedId) => {
      const before = await createFullGroup();
      const target = newId();
      const { user_group: renamed } = expectSuccess(
        await api().update({ user_group_id: before.provided_id, new_user_group_id: target }),
      );
      expect(renamed).toStrictEqual({
        ...before,
        provided_id: providedId(target),
        updated_at: expect.stringMatching(ISO_TIMESTAMP),
      });
      expectError(await api().update({ user_group_id: before.provided_id, name: 'x' }), 404, 'user_group_not_found');
      expect(await current(providedId(target) as string)).toStrictEqual(renamed);
    });

    it('renames onto an id that only the other environment holds, leaving that group alone', async () => {
      const taken = uniqueId('testing-only');
      const testing = expectSuccess(await api('write', 'Testing').getOrCreate({ user_group_id: taken })).user_group;
      const before = await createFullGroup();
      expect(
        expectSuccess(await api().update({ user_group_id: before.provided_id, new_user_group_id: taken })).user_group
          .provided_id,
      ).toBe(taken);
      expect(
        expectSuccess(await api('read', 'Testing').getOrCreate({ user_group_id: taken })).user_group,
      ).toStrictEqual(testing);
    });

    it('never creates: an unknown group is 404 and stays unknown', async () => {
      const id = uniqueId('never');
      const res = await expectUnchanged(ctx.t, () => api().update({ user_group_id: id, name: 'Ghost' }));
      expectError(res, 404, 'user_group_not_found', null);
      expect(expectSuccess(await api().getOrCreate({ user_group_id: id })).new_user_group).toBe(true);
    });
  });

  describe('POST rotates the token', () => {
    it('returns a new token; the old one is dead everywhere, the new one works', async () => {
      const before = await createFullGroup();
      const { user_group: rotated } = expectSuccess(await api().rotate(before.token));
      expect(rotated).toStrictEqual({
        ...before,
        token: expect.stringMatching(USER_GROUP_TOKEN),
        updated_at: expect.stringMatching(ISO_TIMESTAMP),
      });
      expect(rotated.token).not.toBe(before.token);

      for (const attempt of [
        () => api().verify(before.token),
        () => api().rotate(before.token),
        () => api().remove({ current_token: before.token }),
      ]) {
        expectError(await expectUnchanged(ctx.t, attempt), 404, 'user_group_not_found');
      }
      expect(expectSuccess(await api('read').verify(rotated.token)).user_group).toStrictEqual(rotated);
      expect(await current(before.provided_id)).toStrictEqual(rotated);
    });
  });

  describe('DELETE', () => {
    it.each([
      ['current_token', (g: { token: string }) => ({ current_token: g.token })],
      ['user_group_id', (g: { provided_id: string }) => ({ user_group_id: g.provided_id })],
      [
        'both',
        (g: { token: string; provided_id: string }) => ({ current_token: g.token, user_group_id: g.provided_id }),
      ],
    ])('by %s deletes; the token dies and the id can be created anew', async (_label, identify) => {
      const before = await createFullGroup();
      expect(expectSuccess(await api().remove(identify(before)))).toStrictEqual({ success: 1 });
      await expectDeleted(before);
    });

    it('with data_source_provided_id of a mapped data source deletes', async () => {
      const before = await createFullGroup();
      expectSuccess(
        await api().remove({ user_group_id: before.provided_id, data_source_provided_id: catalog.dsA.providedId }),
      );
      await expectDeleted(before);
    });

    async function expectDeleted(before: { provided_id: string; token: string; team_id: number }) {
      expectError(await api().verify(before.token), 404, 'user_group_not_found');
      expectError(await api().update({ user_group_id: before.provided_id, name: 'x' }), 404, 'user_group_not_found');
      const reborn = expectSuccess(await api().getOrCreate({ user_group_id: before.provided_id }));
      expect(reborn.new_user_group).toBe(true);
      expect(reborn.user_group.team_id).toBeGreaterThan(before.team_id);
      expect(reborn.user_group.token).not.toBe(before.token);
      expect(reborn.user_group).toMatchObject({ properties: null, mapping: {} });
    }
  });

  describe('X-Request-Id', () => {
    const withRequestId = (requestId: string) =>
      ctx.client({
        method: 'GET',
        path: USER_PATH,
        token: apiToken(ctx.t),
        body: { user_group_id: uniqueId('rid') },
        headers: { 'x-request-id': requestId },
      });

    it.each([
      ['a UUID', '0f0e8c8e-2a4b-4c4e-9d1a-3b2f4e5d6c7b'],
      ['one character', 'x'],
      ['128 printable characters', `${'a'.repeat(64)}~!@# $%^&*()_+{}|:"<>?`.padEnd(128, 'z')],
    ])("echoes the caller's sane id (%s)", async (_label, requestId) => {
      expect((await withRequestId(requestId)).headers['x-request-id']).toBe(requestId);
    });

    it.each([
      ['129 characters', 'a'.repeat(129)],
      ['a tab', 'bad\tid'],
      ['non-ASCII', 'caf\u00e9'],
      ['nothing', ''],
    ])('replaces an insane id (%s) with a generated one', async (_label, requestId) => {
      const generated = (await withRequestId(requestId)).headers['x-request-id'];
      expect(generated).toMatch(/^[\x21-\x7e]{1,128}$/);
      expect(generated).not.toBe(requestId);
    });

    it('generates a different id for every request and puts it in error envelopes', async () => {
      const [a, b] = [await api().verify('ugt_unknown'), await api().verify('ugt_unknown')];
      expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
      expect(a.body.error.request_id).toBe(a.headers['x-request-id']);
    });
  });

  describe('response headers', () => {
    const requests: Array<[string, (token: string) => ApiRequest]> = [
      [
        'a create (200)',
        (token) => ({ method: 'GET', path: USER_PATH, token, body: { user_group_id: uniqueId('h') } }),
      ],
      [
        'a PUT of an unknown group (404)',
        (token) => ({ method: 'PUT', path: USER_PATH, token, body: { user_group_id: uniqueId('h') } }),
      ],
      [
        'a rotation of an unknown token (404)',
        (token) => ({ method: 'POST', path: USER_PATH, token, body: { current_token: 'ugt_x' } }),
      ],
      ['a DELETE without identifiers (400)', (token) => ({ method: 'DELETE', path: USER_PATH, token, body: {} })],
      [
        'a verification of an unknown token (404)',
        (token) => ({ method: 'POST', path: '/api/user/verify', token, body: { token: 'ugt_x' } }),
      ],
      ['an admin list (200)', (token) => ({ method: 'GET', path: '/api/admin/schemas', token })],
      ['a request without a token (401)', () => ({ method: 'GET', path: USER_PATH, body: { user_group_id: 'x' } })],
    ];

    it.each(requests)('on %s: JSON in UTF-8 and cache-control no-store', async (_label, request) => {
      const res = await ctx.client(request(apiToken(ctx.t)));
      expect(res.headers['content-type']).toBe(JSON_CONTENT_TYPE);
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it.each([
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'application/json; charset="utf8"',
      'Application/JSON',
    ])('accepts a JSON body sent as %s', async (contentType) => {
      const res = await ctx.client({
        method: 'GET',
        path: USER_PATH,
        token: apiToken(ctx.t),
        rawBody: JSON.stringify({ user_group_id: uniqueId('ct') }),
        headers: { 'content-type': contentType },
      });
      expect(expectSuccess(res).new_user_group).toBe(true);
    });
  });
});

describe('real HTTP clients send a GET body', () => {
  const ctx = useTestApp();
  let base: string;
  beforeAll(async () => {
    base = await ctx.t.listen();
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async function curlGet(body: unknown, token: string): Promise<{ status: number; body: any }> {
    const { stdout } = await promisify(execFile)('curl', [
      '-s',
      '-X',
      'GET',
      '--data',
      JSON.stringify(body),
      '-H',
      'Content-Type: application/json',
      '-H',
      `Authorization: Token ${token}`,
      '-w',
      '\n%{http_code}',
      `${base}${USER_PATH}`,
    ]);
    const cut = stdout.lastIndexOf('\n');
    return { status: Number(stdout.slice(cut + 1)), body: JSON.parse(stdout.slice(0, cut)) };
  }

  it('curl -X GET --data creates a group, then gets it', async () => {
    const id = uniqueId('curl');
    const created = await curlGet(
      { user_group_id: id, name: 'From curl', properties: { via: 'curl' } },
      apiToken(ctx.t, { scope: 'write' }),
    );
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      success: 1,
      new_user_group: true,
      user_group: { provided_id: id, name: 'From curl', properties: { via: 'curl' } },
    });
    const again = await curlGet({ user_group_id: id }, apiToken(ctx.t, { scope: 'read' }));
    expect(again.body).toStrictEqual({ success: 1, new_user_group: false, user_group: created.body.user_group });
  });

  it('curl GET body errors come back as the envelope (the body is read, not ignored)', async () => {
    const res = await curlGet({ user_group_id: 'x', nmae: 'typo' }, apiToken(ctx.t));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'unknown_field', field: 'nmae' });
  });

  it('node:http GET with a body creates a group, then gets it', async () => {
    const id = uniqueId('node-http');
    const request = (scope: Scope) =>
      send(base, {
        method: 'GET',
        path: USER_PATH,
        token: apiToken(ctx.t, { scope }),
        body: { user_group_id: id, name: 'From node:http' },
      });
    const created = expectSuccess(await request('write'));
    expect(created).toMatchObject({ new_user_group: true, user_group: { provided_id: id, name: 'From node:http' } });
    expect(expectSuccess(await request('read'))).toStrictEqual({ ...created, new_user_group: false });
  });
});
