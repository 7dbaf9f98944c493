import { describe, expect, it } from 'vitest';
import { auditContext, expectAppError, T1 } from '../store-fixtures.js';
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
      await expectAppError(t.store.insertSchema(t.fx.workspace.id, 'sales', auditContext()), 'schema_name_taken', 'name');
      // "sales" also exists in the other workspace: names are per workspace.
      expect(t.fx.otherSchema.name).toBe(t.fx.schemaA.name);
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
      await expectAppError(t.store.insertDataSource({ ...source, tenant: customer }, auditContext()), 'data_source_id_taken', 'provided_id');
      const inTesting = await t.store.insertDataSource({ ...source, tenant: testing }, auditContext());
      expect(inTesting).toMatchObject({ environment: 'Testing', providedId: 'ds-b' });
    });

    it('findDataSources resolves ids and provided ids inside one tenant only', async () => {
      const { customer, testing, customerA, customerB, testingA, otherA } = t.fx;
      const everything = { ids: [customerA.id, customerB.id, testingA.id, otherA.id], providedIds: ['ds-a', 'ds-b', 'nope'] };
      expect(await t.store.findDataSources(customer, everything)).toEqual([customerA, customerB]);
      expect(await t.store.findDataSources(testing, everything)).toEqual([testingA]);
      expect(await t.store.findDataSources(customer, { ids: [customerB.id], providedIds: [] })).toEqual([customerB]);
      expect(await t.store.findDataSources(customer, { ids: [], providedIds: ['ds-a'] })).toEqual([customerA]);
      expect(await t.store.findDataSources(customer, { ids: [testingA.id], providedIds: [String(customerB.id)] })).toEqual([]);
      expect(await t.store.findDataSources(customer, { ids: [], providedIds: [] })).toEqual([]);
    });
  });
}
