import { describe, expect, it } from 'vitest';
import type { Environment } from '../../src/domain/tenancy.js';
import { inject, type ApiResponse } from '../support/http-client.js';
import { expectError, expectSuccess, expectUnchanged } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { apiToken, type As } from '../support/callers.js';
import { useTestApp } from '../support/test-app.js';

const SCHEMAS = '/api/admin/schemas';
const DATA_SOURCES = '/api/admin/data_sources';

describe('admin catalog', () => {
  const ctx = useTestApp();

  const call = (method: string, path: string, body?: unknown, as: As = {}): Promise<ApiResponse> =>
    inject(ctx.t.app, { method, path, token: apiToken(ctx.t, as), ...(body === undefined ? {} : { body }) });

  // Ids are numbers of their workspace (docs/api.md#schema-and-data-source-ids): another workspace's schema gets an id this one lacks.
  let foreignId = 800_000;
  async function createSchema(as: As = {}): Promise<{ id: number; name: string }> {
    const id = as.workspace === 'other' ? { id: (foreignId += 1) } : {};
    return expectSuccess(await call('POST', SCHEMAS, { name: uniqueId('schema'), ...id }, as)).schema;
  }

  async function createDataSource(fields: Record<string, unknown>, as: As = {}) {
    return expectSuccess(
      await call('POST', DATA_SOURCES, { provided_id: uniqueId('ds'), name: 'Warehouse', ...fields }, as),
    ).data_source;
  }

  const listDataSources = async (query = '', as: As = {}) =>
    expectSuccess(await call('GET', `${DATA_SOURCES}${query}`, undefined, as)).data_sources;

  describe('schemas', () => {
    it('creates a schema and lists it', async () => {
      const name = uniqueId('Sales schema');
      const body = expectSuccess(await call('POST', SCHEMAS, { name }));
      expect(body).toStrictEqual({ success: 1, schema: { id: expect.any(Number), name } });
      expect(expectSuccess(await call('GET', SCHEMAS)).schemas).toContainEqual(body.schema);
    });

    it('schemas are workspace-wide: both environments list them', async () => {
      const schema = await createSchema();
      expect(expectSuccess(await call('GET', SCHEMAS, undefined, { environment: 'Testing' })).schemas).toContainEqual(
        schema,
      );
    });

    it('a duplicate name is 409 schema_name_taken and changes nothing', async () => {
      const schema = await createSchema();
      const res = await expectUnchanged(ctx.t, () => call('POST', SCHEMAS, { name: schema.name }));
      expectError(res, 409, 'schema_name_taken', 'name');
    });
  });

  describe('data sources', () => {
    it('creates a data source in the token’s environment by default', async () => {
      const schema = await createSchema();
      const providedId = uniqueId('warehouse');
      const body = expectSuccess(
        await call('POST', DATA_SOURCES, { provided_id: providedId, name: 'Warehouse', schema_id: schema.id }),
      );
      expect(body).toStrictEqual({
        success: 1,
        data_source: {
          id: expect.any(Number),
          provided_id: providedId,
          name: 'Warehouse',
          schema_id: schema.id,
          api_environment_tag: 'Customer',
          shared: false,
        },
      });
      expect(await listDataSources()).toContainEqual(body.data_source);
    });

    it.each<[Environment, Environment]>([
      ['Customer', 'Testing'],
      ['Testing', 'Customer'],
    ])('a %s token creates in %s when the body says so', async (tokenEnvironment, environment) => {
      const schema = await createSchema();
      const dataSource = await createDataSource(
        { schema_id: schema.id, environment },
        { environment: tokenEnvironment },
      );
      expect(dataSource.api_environment_tag).toBe(environment);
      expect(await listDataSources(`?environment=${environment}`)).toContainEqual(dataSource);
      expect(await listDataSources(`?environment=${tokenEnvironment}`)).not.toContainEqual(dataSource);
    });

    it('a duplicate provided_id in the same environment is 409 data_source_id_taken and changes nothing', async () => {
      const schema = await createSchema();
      const first = await createDataSource({ schema_id: schema.id });
      const res = await expectUnchanged(ctx.t, () =>
        call('POST', DATA_SOURCES, { provided_id: first.provided_id, name: 'Again', schema_id: schema.id }),
      );
      expectError(res, 409, 'data_source_id_taken', 'provided_id');
    });

    it('the same provided_id is allowed once in the other environment', async () => {
      const schema = await createSchema();
      const customer = await createDataSource({ schema_id: schema.id });
      const testing = await createDataSource({
        provided_id: customer.provided_id,
        schema_id: schema.id,
        environment: 'Testing',
      });
      expect(testing).toMatchObject({ provided_id: customer.provided_id, api_environment_tag: 'Testing' });
      expect(testing.id).not.toBe(customer.id);
    });

    it.each([
      ['an id no schema has', () => Promise.resolve(999_999)],
      ["another workspace's schema", async () => (await createSchema({ workspace: 'other' })).id],
    ])('an unknown schema_id (%s) is 400 unknown_schema and changes nothing', async (_label, schemaId) => {
      const id = await schemaId();
      const res = await expectUnchanged(ctx.t, () =>
        call('POST', DATA_SOURCES, { provided_id: uniqueId('ds'), name: 'Orphan', schema_id: id }),
      );
      expectError(res, 400, 'unknown_schema', 'schema_id');
    });

    it('lists the token’s environment by default, ?environment= selects', async () => {
      const schema = await createSchema();
      const customer = await createDataSource({ schema_id: schema.id });
      const testing = await createDataSource({ schema_id: schema.id, environment: 'Testing' });
      const views: Array<[string, As, Environment]> = [
        ['', { environment: 'Customer' }, 'Customer'],
        ['', { environment: 'Testing' }, 'Testing'],
        ['?environment=Testing', { environment: 'Customer' }, 'Testing'],
        ['?environment=Customer', { environment: 'Testing' }, 'Customer'],
      ];
      for (const [query, as, environment] of views) {
        const listed = await listDataSources(query, as);
        expect(
          listed.every((dataSource: { api_environment_tag: string }) => dataSource.api_environment_tag === environment),
        ).toBe(true);
        expect(listed).toContainEqual(environment === 'Customer' ? customer : testing);
        expect(listed).not.toContainEqual(environment === 'Customer' ? testing : customer);
      }
    });
  });

  it("another workspace's admin sees none of this workspace's schemas or data sources", async () => {
    const schema = await createSchema();
    const dataSources = [
      await createDataSource({ schema_id: schema.id }),
      await createDataSource({ schema_id: schema.id, environment: 'Testing' }),
    ];
    const other: As = { workspace: 'other' };
    const otherSchemas = expectSuccess(await call('GET', SCHEMAS, undefined, other)).schemas;
    expect(otherSchemas.map((s: { id: number }) => s.id)).not.toContain(schema.id);
    for (const query of ['', '?environment=Customer', '?environment=Testing']) {
      const otherIds = (await listDataSources(query, other)).map((d: { id: number }) => d.id);
      for (const dataSource of dataSources) expect(otherIds).not.toContain(dataSource.id);
    }
  });

  describe('rejected input changes nothing', () => {
    const schemaBody = (fields: Record<string, unknown>) => ({ name: uniqueId('schema'), ...fields });
    const dataSourceBody = (fields: Record<string, unknown>) => ({
      provided_id: uniqueId('ds'),
      name: 'N',
      schema_id: 1,
      ...fields,
    });

    it.each([
      ['POST schemas', SCHEMAS, schemaBody({ nmae: 'typo' }), 400, 'unknown_field', 'nmae'],
      ['POST schemas', SCHEMAS, schemaBody({ environment: 'Testing' }), 400, 'unknown_field', 'environment'],
      ['POST schemas', SCHEMAS, {}, 400, 'missing_field', 'name'],
      ['POST schemas', SCHEMAS, schemaBody({ name: '' }), 400, 'invalid_field', 'name'],
      ['POST schemas', SCHEMAS, schemaBody({ name: 'x'.repeat(257) }), 400, 'invalid_field', 'name'],
      ['POST schemas', SCHEMAS, schemaBody({ name: 'a\nb' }), 400, 'invalid_field', 'name'],
      ['POST data_sources', DATA_SOURCES, dataSourceBody({ schemaid: 1 }), 400, 'unknown_field', 'schemaid'],
      ['POST data_sources', DATA_SOURCES, { name: 'N', schema_id: 1 }, 400, 'missing_field', 'provided_id'],
      ['POST data_sources', DATA_SOURCES, { provided_id: 'p', schema_id: 1 }, 400, 'missing_field', 'name'],
      ['POST data_sources', DATA_SOURCES, { provided_id: 'p', name: 'N' }, 400, 'missing_field', 'schema_id'],
      ['POST data_sources', DATA_SOURCES, dataSourceBody({ schema_id: '1' }), 400, 'invalid_field', 'schema_id'],
      ['POST data_sources', DATA_SOURCES, dataSourceBody({ schema_id: 0 }), 400, 'invalid_field', 'schema_id'],
      ['POST data_sources', DATA_SOURCES, dataSourceBody({ provided_id: '' }), 400, 'invalid_field', 'provided_id'],
      [
        'POST data_sources',
        DATA_SOURCES,
        dataSourceBody({ environment: 'Production' }),
        400,
        'invalid_field',
        'environment',
      ],
    ])('%s %j → %i %s', async (_label, path, body, status, code, field) => {
      const res = await expectUnchanged(ctx.t, () => call('POST', path, body));
      expectError(res, status, code, field);
    });

    it.each([
      ['?environment=Production', 'invalid_field', 'environment'],
      ['?environment=Testing&foo=1', 'unknown_field', 'foo'],
    ])('GET data_sources%s → 400 %s', async (query, code, field) => {
      expectError(await call('GET', `${DATA_SOURCES}${query}`), 400, code, field);
    });
  });

  describe('chosen ids', () => {
    const nextFree = async () =>
      Math.max(0, ...expectSuccess(await call('GET', SCHEMAS)).schemas.map((schema: { id: number }) => schema.id)) +
      1000;

    it('keeps a chosen schema and data source id, issues later ones above it, and never reuses a deleted one', async () => {
      const schemaId = await nextFree();
      const schema = expectSuccess(await call('POST', SCHEMAS, { name: uniqueId('hosted'), id: schemaId })).schema;
      expect(schema).toMatchObject({ id: schemaId });
      expect((await createSchema()).id).toBe(schemaId + 1);
      // The same id in another workspace is that workspace's own.
      const elsewhere = expectSuccess(
        await call('POST', SCHEMAS, { name: uniqueId('hosted'), id: schemaId }, { workspace: 'other' }),
      ).schema;
      expect(elsewhere.id).toBe(schemaId);

      const sourceId = schemaId + 500;
      const source = await createDataSource({ id: sourceId, schema_id: schemaId });
      expect(source).toMatchObject({ id: sourceId, schema_id: schemaId });
      expectSuccess(await call('DELETE', `${DATA_SOURCES}/${sourceId}`));
      expect((await createDataSource({ schema_id: schemaId })).id).toBe(sourceId + 1);
    });

    it('a taken id is 409 id_taken naming id, and nothing changes', async () => {
      const schema = await createSchema();
      expectError(
        await expectUnchanged(ctx.t, () => call('POST', SCHEMAS, { name: uniqueId('dup'), id: schema.id })),
        409,
        'id_taken',
        'id',
      );
      const source = await createDataSource({ schema_id: schema.id });
      expectError(
        await expectUnchanged(ctx.t, () =>
          call('POST', DATA_SOURCES, { provided_id: uniqueId('ds'), name: 'N', schema_id: schema.id, id: source.id }),
        ),
        409,
        'id_taken',
        'id',
      );
      // Nothing changed: the next automatic id is the one it would have been.
      expect((await createDataSource({ schema_id: schema.id })).id).toBe(source.id + 1);
    });

    it.each([0, -1, 1.5, '40', 2_147_483_648, null])(
      'a bad id %j is 400 invalid_field naming id, and nothing changes',
      async (id) => {
        const schema = await createSchema();
        expectError(
          await expectUnchanged(ctx.t, () => call('POST', SCHEMAS, { name: uniqueId('bad'), id })),
          400,
          'invalid_field',
          'id',
        );
        expectError(
          await expectUnchanged(ctx.t, () =>
            call('POST', DATA_SOURCES, { provided_id: uniqueId('ds'), name: 'N', schema_id: schema.id, id }),
          ),
          400,
          'invalid_field',
          'id',
        );
      },
    );

    // In the other workspace, whose automatic ids this file never needs (it chooses them there).
    it('takes the largest id, 2147483647; an automatic one past it is 409 ids_exhausted', async () => {
      const other = { workspace: 'other' } as const;
      const top = expectSuccess(await call('POST', SCHEMAS, { name: uniqueId('top'), id: 2_147_483_647 }, other));
      expect(top.schema.id).toBe(2_147_483_647);
      expectError(
        await expectUnchanged(ctx.t, () => call('POST', SCHEMAS, { name: uniqueId('next') }, other)),
        409,
        'ids_exhausted',
        'id',
      );
    });
  });
});
