import { describe, expect, it } from 'vitest';
import type { DataSourceRecord } from '../../../src/domain/data-sources/data-source.records.js';
import { auditContext, createGroup, expectAppError, T1 } from '../store-fixtures.js';
import type { ContractContext } from './context.js';

export function describeCatalogContract(t: ContractContext): void {
  describe('schemas', () => {
    it('inserts, lists per workspace in id order, and finds by ids inside the workspace', async () => {
      const { workspace, schemaA, schemaB, otherSchema } = t.fx;
      const added = await t.store.insertSchema(workspace.id, 'finance', auditContext({ at: T1 }));
      expect(added).toEqual({ id: expect.any(Number), workspaceId: workspace.id, name: 'finance', createdAt: T1 });
      expect(await t.store.listSchemas(workspace.id)).toEqual([schemaA, schemaB, added]);
      expect(await t.store.findSchemasByIds(workspace.id, [added.id, schemaA.id, otherSchema.id, 999_999])).toEqual([
        schemaA,
        added,
      ]);
      expect(await t.store.findSchemasByIds(workspace.id, [])).toEqual([]);
    });

    it('refuses a duplicate name in a workspace with schema_name_taken', async () => {
      await expectAppError(
        t.store.insertSchema(t.fx.workspace.id, 'sales', auditContext()),
        'schema_name_taken',
        'name',
      );
      // "sales" also exists in the other workspace: names are per workspace.
      expect(t.fx.otherSchema.name).toBe(t.fx.schemaA.name);
    });
  });

  describe('a turn of mapping reads', () => {
    it('answers each of the schema and data source reads asked for together with exactly its own records', async () => {
      const {
        workspace,
        otherWorkspace,
        customer,
        testing,
        otherCustomer,
        schemaA,
        schemaB,
        otherSchema,
        customerA,
        customerB,
        testingA,
        otherA,
      } = t.fx;
      const [schemas, dataSources] = await Promise.all([
        Promise.all([
          t.store.findSchemasByIds(workspace.id, [schemaA.id]),
          t.store.findSchemasByIds(workspace.id, [schemaB.id, otherSchema.id]),
          t.store.findSchemasByIds(otherWorkspace.id, [otherSchema.id, schemaA.id]),
          t.store.findSchemasByIds(workspace.id, []),
        ]),
        Promise.all([
          t.store.findDataSources(customer, { ids: [customerA.id], providedIds: [] }),
          t.store.findDataSources(customer, { ids: [], providedIds: ['ds-b'] }),
          // The same provided id in another environment and another workspace: each finds its own.
          t.store.findDataSources(testing, { ids: [customerA.id], providedIds: ['ds-a'] }),
          t.store.findDataSources(otherCustomer, { ids: [], providedIds: ['ds-a', 'ds-b'] }),
        ]),
      ]);
      expect(schemas).toEqual([[schemaA], [schemaB], [otherSchema], []]);
      expect(dataSources).toEqual([[customerA], [customerB], [testingA], [otherA]]);
    });
  });

  describe('data sources', () => {
    it('inserts and lists per workspace, optionally per environment', async () => {
      const { customer, workspace, schemaB, customerA, customerB, testingA } = t.fx;
      const added = await t.store.insertDataSource(
        { tenant: customer, providedId: '213', name: 'Warehouse', schemaId: schemaB.id, createdAt: T1 },
        auditContext(),
      );
      expect(added).toEqual({
        id: expect.any(Number),
        workspaceId: workspace.id,
        environment: 'Customer',
        providedId: '213',
        name: 'Warehouse',
        schemaId: schemaB.id,
        createdAt: T1,
      });
      expect(await t.store.listDataSources(workspace.id)).toEqual([customerA, customerB, testingA, added]);
      expect(await t.store.listDataSources(workspace.id, 'Customer')).toEqual([customerA, customerB, added]);
      expect(await t.store.listDataSources(workspace.id, 'Testing')).toEqual([testingA]);
    });

    it('refuses a provided id taken in the same environment, allows it in the other', async () => {
      const { customer, testing, schemaB } = t.fx;
      const source = { providedId: 'ds-b', name: 'again', schemaId: schemaB.id, createdAt: T1 };
      await expectAppError(
        t.store.insertDataSource({ ...source, tenant: customer }, auditContext()),
        'data_source_id_taken',
        'provided_id',
      );
      const inTesting = await t.store.insertDataSource({ ...source, tenant: testing }, auditContext());
      expect(inTesting).toMatchObject({ environment: 'Testing', providedId: 'ds-b' });
    });

    it('findDataSources resolves ids and provided ids inside one tenant only', async () => {
      const { customer, testing, customerA, customerB, testingA, otherA } = t.fx;
      const everything = {
        ids: [customerA.id, customerB.id, testingA.id, otherA.id],
        providedIds: ['ds-a', 'ds-b', 'nope'],
      };
      expect(await t.store.findDataSources(customer, everything)).toEqual([customerA, customerB]);
      expect(await t.store.findDataSources(testing, everything)).toEqual([testingA]);
      expect(await t.store.findDataSources(customer, { ids: [customerB.id], providedIds: [] })).toEqual([customerB]);
      expect(await t.store.findDataSources(customer, { ids: [], providedIds: ['ds-a'] })).toEqual([customerA]);
      expect(
        await t.store.findDataSources(customer, { ids: [testingA.id], providedIds: [String(customerB.id)] }),
      ).toEqual([]);
      expect(await t.store.findDataSources(customer, { ids: [], providedIds: [] })).toEqual([]);
    });

    it('findDataSourceById finds a data source of either environment inside its workspace only', async () => {
      const { workspace, otherWorkspace, customerA, testingA, otherA } = t.fx;
      expect(await t.store.findDataSourceById(workspace.id, customerA.id)).toEqual(customerA);
      expect(await t.store.findDataSourceById(workspace.id, testingA.id)).toEqual(testingA);
      expect(await t.store.findDataSourceById(workspace.id, otherA.id)).toBeNull();
      expect(await t.store.findDataSourceById(otherWorkspace.id, customerA.id)).toBeNull();
      expect(await t.store.findDataSourceById(workspace.id, otherA.id + 1000)).toBeNull();
    });
  });

  describe('data sources: update and delete', () => {
    /** Maps `count` new Customer groups to `dataSource` under its schema. */
    const mapGroupsTo = async (dataSource: DataSourceRecord, count: number) => {
      const mapping = [{ schemaId: dataSource.schemaId, dataSourceId: dataSource.id }];
      const groups = [];
      for (let i = 0; i < count; i++)
        groups.push(await createGroup(t.store, t.fx.customer, `user-of-${dataSource.id}-${i}`, { mapping }));
      return groups;
    };

    it('applies a patch of any fields and returns the changed record', async () => {
      const { workspace, customerA, schemaB } = t.fx;
      const renamed = await t.store.updateDataSource(workspace.id, customerA.id, { name: 'Renamed' }, auditContext());
      expect(renamed).toEqual({ status: 'changed', dataSource: { ...customerA, name: 'Renamed' } });
      const patch = { providedId: 'ds-new', name: 'Warehouse', schemaId: schemaB.id };
      const everything = await t.store.updateDataSource(workspace.id, customerA.id, patch, auditContext());
      const expected = { ...customerA, ...patch };
      expect(everything).toEqual({ status: 'changed', dataSource: expected });
      expect(await t.store.findDataSourceById(workspace.id, customerA.id)).toEqual(expected);
      expect(await t.store.findDataSources(t.fx.customer, { ids: [], providedIds: ['ds-a', 'ds-new'] })).toEqual([
        expected,
      ]);
    });

    it('answers not_found for an unknown id or one of another workspace, changing nothing', async () => {
      const { workspace, otherWorkspace, customerA, otherA } = t.fx;
      expect(await t.store.updateDataSource(workspace.id, otherA.id, { name: 'x' }, auditContext())).toEqual({
        status: 'not_found',
      });
      expect(await t.store.updateDataSource(otherWorkspace.id, customerA.id, { name: 'x' }, auditContext())).toEqual({
        status: 'not_found',
      });
      expect(await t.store.deleteDataSource(otherWorkspace.id, customerA.id, auditContext())).toEqual({
        status: 'not_found',
      });
      expect(await t.store.deleteDataSource(workspace.id, otherA.id + 1000, auditContext())).toEqual({
        status: 'not_found',
      });
      expect(await t.store.findDataSourceById(workspace.id, customerA.id)).toEqual(customerA);
      expect(await t.store.findDataSourceById(otherWorkspace.id, otherA.id)).toEqual(otherA);
    });

    it('refuses a schema change while groups map to the data source, counting them, and allows other changes', async () => {
      const { workspace, customerA, schemaA, schemaB } = t.fx;
      await mapGroupsTo(customerA, 3);
      const change = await t.store.updateDataSource(
        workspace.id,
        customerA.id,
        { name: 'lost', schemaId: schemaB.id },
        auditContext(),
      );
      expect(change).toEqual({ status: 'in_use', usedBy: 3 });
      expect(await t.store.findDataSourceById(workspace.id, customerA.id)).toEqual(customerA);

      const sameSchema = { providedId: 'ds-a2', name: 'Kept', schemaId: schemaA.id };
      const allowed = await t.store.updateDataSource(workspace.id, customerA.id, sameSchema, auditContext());
      expect(allowed).toEqual({ status: 'changed', dataSource: { ...customerA, ...sameSchema } });
    });

    it('refuses a provided id another data source of the environment has, with data_source_id_taken', async () => {
      const { workspace, customerA, testingA } = t.fx;
      await expectAppError(
        t.store.updateDataSource(workspace.id, customerA.id, { providedId: 'ds-b', name: 'lost' }, auditContext()),
        'data_source_id_taken',
        'provided_id',
      );
      expect(await t.store.findDataSourceById(workspace.id, customerA.id)).toEqual(customerA);
      const moved = await t.store.updateDataSource(workspace.id, testingA.id, { providedId: 'ds-b' }, auditContext());
      expect(moved).toEqual({ status: 'changed', dataSource: { ...testingA, providedId: 'ds-b' } });
    });

    it('deletes an unused data source, and refuses one in use with the count of its groups', async () => {
      const { workspace, customerA, customerB } = t.fx;
      const [user] = await mapGroupsTo(customerB, 2);
      expect(await t.store.deleteDataSource(workspace.id, customerB.id, auditContext())).toEqual({
        status: 'in_use',
        usedBy: 2,
      });
      expect(await t.store.findDataSourceById(workspace.id, customerB.id)).toEqual(customerB);

      expect(await t.store.deleteDataSource(workspace.id, customerA.id, auditContext())).toEqual({
        status: 'changed',
        dataSource: customerA,
      });
      expect(await t.store.findDataSourceById(workspace.id, customerA.id)).toBeNull();
      expect(await t.store.listDataSources(workspace.id, 'Customer')).toEqual([customerB]);
      expect(await t.store.deleteDataSource(workspace.id, customerA.id, auditContext())).toEqual({
        status: 'not_found',
      });

      // Once no group maps to it any more, it can go.
      const unmapped = await t.store.updateUserGroup(
        {
          tenant: t.fx.customer,
          teamId: user!.teamId,
          expectedVersion: user!.version,
          patch: { mapping: [] },
          updatedAt: T1,
        },
        auditContext(),
      );
      expect(unmapped?.mapping).toEqual([]);
      expect(await t.store.deleteDataSource(workspace.id, customerB.id, auditContext())).toEqual({
        status: 'in_use',
        usedBy: 1,
      });
    });
  });

  describe('ids: numbers of their workspace', () => {
    it('a chosen schema or data source id is kept; later ones are issued above it, never reused', async () => {
      const { workspace, customer, otherWorkspace, otherCustomer } = t.fx;
      const chosen = await t.store.insertSchema(workspace.id, 'hosted', auditContext(), 40);
      expect(chosen).toMatchObject({ id: 40, name: 'hosted' });
      const next = await t.store.insertSchema(workspace.id, 'after', auditContext());
      expect(next.id).toBe(41);
      // Below the high-water mark, a free number can still be chosen.
      expect((await t.store.insertSchema(workspace.id, 'low', auditContext(), 10)).id).toBe(10);
      // The same number in another workspace is that workspace's own.
      const elsewhere = await t.store.insertSchema(otherWorkspace.id, 'hosted', auditContext(), 40);
      expect(elsewhere).toMatchObject({ id: 40, workspaceId: otherWorkspace.id });

      const source = (id?: number, providedId = `p-${id ?? 'next'}`) => ({
        tenant: customer,
        providedId,
        name: 'Warehouse',
        schemaId: chosen.id,
        createdAt: T1,
        ...(id ? { id } : {}),
      });
      const ds = await t.store.insertDataSource(source(213), auditContext());
      expect(ds).toMatchObject({ id: 213, schemaId: 40, providedId: 'p-213' });
      expect(await t.store.findDataSourceById(workspace.id, 213)).toEqual(ds);
      expect(await t.store.deleteDataSource(workspace.id, 213, auditContext())).toEqual({
        status: 'changed',
        dataSource: ds,
      });
      // Deleted, the number is never issued again.
      expect((await t.store.insertDataSource(source(), auditContext())).id).toBe(214);
      const other = await t.store.insertDataSource(
        { ...source(213), tenant: otherCustomer, schemaId: elsewhere.id },
        auditContext(),
      );
      expect(other).toMatchObject({ id: 213, workspaceId: otherWorkspace.id, schemaId: 40 });
    });

    it('a taken id is id_taken naming "id" and changes nothing, not even the next number', async () => {
      const { workspace, customer, schemaA, customerA } = t.fx;
      const before = await t.store.listSchemas(workspace.id);
      await expectAppError(t.store.insertSchema(workspace.id, 'dup', auditContext(), schemaA.id), 'id_taken', 'id');
      // A taken name with a fresh id changes nothing either.
      await expectAppError(t.store.insertSchema(workspace.id, schemaA.name, auditContext(), 500), 'schema_name_taken');
      expect(await t.store.listSchemas(workspace.id)).toEqual(before);
      const sources = await t.store.listDataSources(workspace.id);
      const dup = { tenant: customer, providedId: 'fresh', name: 'x', schemaId: schemaA.id, createdAt: T1 };
      await expectAppError(t.store.insertDataSource({ ...dup, id: customerA.id }, auditContext()), 'id_taken', 'id');
      expect(await t.store.listDataSources(workspace.id)).toEqual(sources);
      const maxSchema = Math.max(...before.map((schema) => schema.id));
      expect((await t.store.insertSchema(workspace.id, 'next', auditContext())).id).toBe(maxSchema + 1);
      const maxSource = Math.max(...sources.map((source) => source.id));
      expect((await t.store.insertDataSource(dup, auditContext())).id).toBe(maxSource + 1);
    });

    it('a mapping names chosen numbers and reads them back', async () => {
      const { workspace, customer } = t.fx;
      const schema = await t.store.insertSchema(workspace.id, 'hosted', auditContext(), 134);
      const ds = await t.store.insertDataSource(
        { tenant: customer, id: 386, providedId: 'hosted-386', name: 'x', schemaId: 134, createdAt: T1 },
        auditContext(),
      );
      const group = await createGroup(t.store, customer, 'mapped', {
        mapping: [{ schemaId: schema.id, dataSourceId: ds.id }],
      });
      expect(group.mapping).toEqual([{ schemaId: 134, dataSourceId: 386 }]);
      expect((await t.store.findUserGroupByProvidedId(customer, 'mapped'))?.mapping).toEqual([
        { schemaId: 134, dataSourceId: 386 },
      ]);
      expect(await t.store.deleteDataSource(workspace.id, 386, auditContext())).toEqual({
        status: 'in_use',
        usedBy: 1,
      });
    });
  });
}
