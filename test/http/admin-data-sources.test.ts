import { describe, expect, it } from 'vitest';
import type { DataSourceRecord } from '../../src/domain/data-sources/data-source.records.js';
import { injectClient, type ApiResponse } from '../support/http-client.js';
import { ADMIN, adminCall, adminOk, userGroupAsUserApiShowsIt, wireDataSource } from './admin-helpers.js';
import { expectError, expectSuccess, expectUnchanged, seedDataSource, seedSchema } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { apiToken } from '../support/callers.js';
import { makeGroup, type UserGroup } from '../support/group-maker.js';
import { userGroupApi } from '../support/user-group-api.js';
import { useTestApp } from '../support/test-app.js';

const dataSourcePath = (id: number | string) => `${ADMIN.dataSources}/${id}`;

describe('the admin data source API', () => {
  const ctx = useTestApp();

  const get = (id: number | string) => adminCall(ctx.t, { path: dataSourcePath(id) });
  const patch = (id: number | string, body: unknown) =>
    adminCall(ctx.t, { method: 'PATCH', path: dataSourcePath(id), body });
  const remove = (id: number | string) => adminCall(ctx.t, { method: 'DELETE', path: dataSourcePath(id) });

  /** A fresh schema and a data source serving it, in the default workspace's Customer environment. */
  async function dataSource(): Promise<DataSourceRecord> {
    return seedDataSource(ctx.t, await seedSchema(ctx.t));
  }

  /** `count` groups mapping the data source's schema to it. */
  async function mapGroups(source: DataSourceRecord, count: number): Promise<UserGroup[]> {
    const groups: UserGroup[] = [];
    for (let i = 0; i < count; i += 1)
      groups.push(await makeGroup(ctx.t, { mapping: { [source.schemaId]: source.id } }));
    return groups;
  }

  /** The groups' mappings as /api/user shows them. */
  const mappingsOf = (groups: UserGroup[]) =>
    Promise.all(groups.map(async (group) => (await userGroupAsUserApiShowsIt(ctx.t, group.provided_id)).mapping));

  const usedBy = (count: number) => new RegExp(`\\b${count} user groups?\\b`);

  describe('GET /api/admin/data_sources/{id}', () => {
    it('returns the data source as the list shows it', async () => {
      const source = await dataSource();
      const body = expectSuccess(await get(source.id));
      expect(body).toStrictEqual({ success: 1, data_source: wireDataSource(source) });
      expect((await adminOk(ctx.t, { path: ADMIN.dataSources })).data_sources).toContainEqual(body.data_source);
    });
  });

  describe('POST /api/admin/data_sources with shared', () => {
    it('makes it mappable from both environments by the same id; the default is its own environment only', async () => {
      const schemaId = await seedSchema(ctx.t);
      const create = (body: Record<string, unknown>) =>
        adminOk(ctx.t, {
          method: 'POST',
          path: ADMIN.dataSources,
          body: { provided_id: uniqueId('ds'), name: 'Sales', schema_id: schemaId, ...body },
        });
      const shared = (await create({ shared: true })).data_source as { id: number; shared: boolean };
      const own = (await create({})).data_source as { id: number; shared: boolean };
      expect([shared.shared, own.shared]).toEqual([true, false]);
      const testingList = (await adminOk(ctx.t, { path: ADMIN.dataSources, as: { environment: 'Testing' } }))
        .data_sources as Array<{ id: number }>;
      expect(testingList.map((source) => source.id)).toContain(shared.id);
      expect(testingList.map((source) => source.id)).not.toContain(own.id);

      const testing = userGroupApi(
        injectClient(ctx.t.app),
        apiToken(ctx.t, { environment: 'Testing', scope: 'write' }),
      );
      const mapped = await testing.getOrCreate({ user_group_id: uniqueId('t'), mapping: { [schemaId]: shared.id } });
      expect(expectSuccess(mapped).user_group.mapping).toEqual({ [schemaId]: String(shared.id) });
      expectError(
        await testing.getOrCreate({ user_group_id: uniqueId('t'), mapping: { [schemaId]: own.id } }),
        400,
        'unknown_data_source',
      );
    });
  });

  describe('PATCH /api/admin/data_sources/{id}', () => {
    it.each<[string, (source: DataSourceRecord) => Promise<Record<string, unknown>>]>([
      ['name', async () => ({ name: uniqueId('Renamed') })],
      ['provided_id', async () => ({ provided_id: uniqueId('re-id') })],
      ['schema_id', async () => ({ schema_id: await seedSchema(ctx.t) })],
      [
        'every field at once',
        async () => ({ name: 'All new', provided_id: uniqueId('all'), schema_id: await seedSchema(ctx.t) }),
      ],
      [
        'the provided_id of one in the other environment (unique per environment)',
        async (source) => {
          const testing = await seedDataSource(ctx.t, source.schemaId, { environment: 'Testing' });
          return { provided_id: testing.providedId };
        },
      ],
    ])('changes %s, keeps the rest, and GET shows the change', async (_label, fields) => {
      const source = await dataSource();
      const changes = await fields(source);
      const expected = { ...wireDataSource(source), ...changes };
      expect(expectSuccess(await patch(source.id, changes))).toStrictEqual({ success: 1, data_source: expected });
      expect(expectSuccess(await get(source.id)).data_source).toStrictEqual(expected);
    });

    it.each<[string, Record<string, unknown>]>([
      ['an empty body', {}],
      ['the values it has', { name: 'Data source' }],
    ])('with %s answers the data source unchanged, and writes nothing', async (_label, body) => {
      const source = await dataSource();
      const res = await expectUnchanged(ctx.t, () => patch(source.id, body));
      expect(expectSuccess(res).data_source).toStrictEqual(wireDataSource(source));
    });

    it('a provided_id another data source of the environment has is 409 data_source_id_taken, and nothing changes', async () => {
      const [source, taken] = [await dataSource(), await dataSource()];
      const res = await expectUnchanged(ctx.t, () =>
        patch(source.id, { provided_id: taken.providedId, name: 'Not applied' }),
      );
      expectError(res, 409, 'data_source_id_taken', 'provided_id');
    });

    it('while groups map to it, a rename and its own schema_id are fine', async () => {
      const source = await dataSource();
      await mapGroups(source, 1);
      const body = expectSuccess(
        await patch(source.id, { name: 'Renamed in use', provided_id: uniqueId('in-use'), schema_id: source.schemaId }),
      );
      expect(body.data_source).toMatchObject({ id: source.id, name: 'Renamed in use', schema_id: source.schemaId });
    });

    it('an unknown schema_id is 400 unknown_schema, and nothing changes', async () => {
      const source = await dataSource();
      const foreignSchema = await seedSchema(ctx.t, 'other');
      for (const schemaId of [999_999_999, foreignSchema]) {
        expectError(
          await expectUnchanged(ctx.t, () => patch(source.id, { schema_id: schemaId })),
          400,
          'unknown_schema',
          'schema_id',
        );
      }
    });

    it.each<[string, Record<string, unknown>, string, string]>([
      ['an unknown field', { nmae: 'typo' }, 'unknown_field', 'nmae'],
      ['a field that cannot change', { environment: 'Testing' }, 'unknown_field', 'environment'],
      ['an empty name', { name: '' }, 'invalid_field', 'name'],
      ['a name of 257 characters', { name: 'x'.repeat(257) }, 'invalid_field', 'name'],
      ['a provided_id with a control character', { provided_id: 'a\u0000b' }, 'invalid_field', 'provided_id'],
      ['a null name', { name: null }, 'invalid_field', 'name'],
      ['a schema_id as text', { schema_id: '1' }, 'invalid_field', 'schema_id'],
      ['schema_id 0', { schema_id: 0 }, 'invalid_field', 'schema_id'],
    ])('refuses %s: 400 %s naming %s, and nothing changes', async (_label, body, code, field) => {
      const source = await dataSource();
      expectError(await expectUnchanged(ctx.t, () => patch(source.id, body)), 400, code, field);
    });
  });

  describe('while user groups map to a data source', () => {
    /** Each prepares its request first, so that only the request itself runs inside expectUnchanged. */
    const REFUSED: Array<[string, (source: DataSourceRecord) => Promise<() => Promise<ApiResponse>>]> = [
      [
        'PATCH of schema_id',
        async (source) => {
          const schemaId = await seedSchema(ctx.t);
          return () => patch(source.id, { schema_id: schemaId, name: 'Not applied' });
        },
      ],
      ['DELETE', async (source) => () => remove(source.id)],
    ];

    it.each(REFUSED.flatMap(([label, prepare]) => [1, 2].map((count) => ({ label, prepare, count }))))(
      '$label is 409 data_source_in_use naming the count ($count); the data source and the mappings stay',
      async ({ prepare, count }) => {
        const source = await dataSource();
        const groups = await mapGroups(source, count);
        const res = await expectUnchanged(ctx.t, await prepare(source));
        expectError(res, 409, 'data_source_in_use', null);
        expect(res.body.error.message).toMatch(usedBy(count));
        expect(expectSuccess(await get(source.id)).data_source).toStrictEqual(wireDataSource(source));
        expect(await mappingsOf(groups)).toEqual(groups.map(() => ({ [source.schemaId]: String(source.id) })));
      },
    );
  });

  describe('DELETE /api/admin/data_sources/{id}', () => {
    it('works once no group maps to it (PUT mapping {}), answering the deleted data source; then it is gone', async () => {
      const source = await dataSource();
      const groups = await mapGroups(source, 2);
      const api = userGroupApi(injectClient(ctx.t.app), apiToken(ctx.t, { scope: 'write' }));
      expectError(await remove(source.id), 409, 'data_source_in_use', null);
      expectSuccess(await api.update({ user_group_id: groups[0]!.provided_id, mapping: {} }));
      expect((await remove(source.id)).body.error.message).toMatch(usedBy(1));
      expectSuccess(await api.update({ user_group_id: groups[1]!.provided_id, mapping: {} }));

      expect(expectSuccess(await remove(source.id))).toStrictEqual({ success: 1, data_source: wireDataSource(source) });
      expectError(await get(source.id), 404, 'data_source_not_found', null);
      expect((await adminOk(ctx.t, { path: ADMIN.dataSources })).data_sources).not.toContainEqual(
        wireDataSource(source),
      );
      expectError(await remove(source.id), 404, 'data_source_not_found', null);
    });
  });

  describe('an id that names no data source of this workspace', () => {
    const unknownIds: Array<[string, () => Promise<number>]> = [
      ['never issued', async () => 999_999_999],
      [
        "another workspace's",
        async () => (await seedDataSource(ctx.t, await seedSchema(ctx.t, 'other'), { workspace: 'other' })).id,
      ],
    ];
    const requests: Array<[string, (id: number | string) => ReturnType<typeof get>]> = [
      ['GET', (id) => get(id)],
      ['PATCH', (id) => patch(id, { name: 'Hijacked' })],
      ['DELETE', (id) => remove(id)],
    ];

    it.each(unknownIds.flatMap(([label, id]) => requests.map(([method, send]) => ({ label, id, method, send }))))(
      '$method of an id $label is 404 data_source_not_found, and nothing changes',
      async ({ id, send }) => {
        const target = await id();
        expectError(await expectUnchanged(ctx.t, () => send(target)), 404, 'data_source_not_found', null);
      },
    );

    it.each(['abc', '0', '-1', '1.5', '12345678901234567'])(
      'refuses the id %s on GET, PATCH and DELETE: 400 invalid_field naming id',
      async (id) => {
        for (const [, send] of requests)
          expectError(await expectUnchanged(ctx.t, () => send(id)), 400, 'invalid_field', 'id');
      },
    );

    it("another workspace's data source stays as it was", async () => {
      const foreign = await seedDataSource(ctx.t, await seedSchema(ctx.t, 'other'), { workspace: 'other' });
      for (const [, send] of requests) expectError(await send(foreign.id), 404, 'data_source_not_found', null);
      const seen = await adminOk(ctx.t, { path: dataSourcePath(foreign.id), as: { workspace: 'other' } });
      expect(seen.data_source).toStrictEqual(wireDataSource(foreign));
    });
  });
});
