// `ugs data-sources update|delete`: renames that groups follow, and deletes refused while groups map
// to the data source, with the number of those groups in the message.
import { afterEach, describe, expect, it } from 'vitest';
import {
  cleanUp,
  createDataSource,
  createSchema,
  exportGroups,
  importGroups,
  type Sandbox,
  sandbox,
} from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput } from '../support/ugs-command.js';

afterEach(cleanUp);

interface DataSource {
  id: number;
  provided_id: string;
  name: string;
  schema_id: number;
  api_environment_tag: string;
}

const listDataSources = async (box: Sandbox, environment = 'Customer') =>
  jsonOutput<DataSource[]>(await box.ugs('data-sources', 'list', '--environment', environment, '--json'));

const auditActions = async (box: Sandbox, action: string) =>
  jsonOutput<Array<{ actor: string; provided_id: string; changes: unknown }>>(
    await box.ugs('audit', 'list', '--action', action, '--json'),
  );

/** A database with schema `sales` and data source `warehouse` (Customer) serving it. */
async function withWarehouse() {
  const box = sandbox();
  const sales = await createSchema(box, 'sales');
  const warehouse = await createDataSource(box, { providedId: 'warehouse', schemaId: sales, environment: 'Customer' });
  return { box, sales, warehouse };
}

describe('ugs data-sources update', { timeout: 60_000 }, () => {
  it('--name renames it: prints its id, or the data source with --json; the list and the audit trail show it', async () => {
    const { box, sales, warehouse } = await withWarehouse();

    expect(await box.ugs('data-sources', 'update', String(warehouse), '--name', 'EU warehouse')).toEqual({
      code: 0,
      stdout: `${warehouse}\n`,
      stderr: '',
    });
    const updated = jsonOutput<DataSource>(
      await box.ugs('data-sources', 'update', String(warehouse), '--name', 'EU warehouse (Frankfurt)', '--json'),
    );
    const expected = {
      id: warehouse,
      provided_id: 'warehouse',
      name: 'EU warehouse (Frankfurt)',
      schema_id: sales,
      api_environment_tag: 'Customer',
      shared: false,
    };
    expect(updated).toEqual(expected);
    expect(await listDataSources(box)).toEqual([expected]);

    expect(await auditActions(box, 'data_source.updated')).toEqual([
      expect.objectContaining({
        actor: 'cli',
        changes: { name: { before: 'EU warehouse', after: 'EU warehouse (Frankfurt)' } },
      }),
      expect.objectContaining({ actor: 'cli', changes: { name: { before: 'warehouse', after: 'EU warehouse' } } }),
    ]);
  });

  it('--provided-id renames it in exports, and the groups still map to it', async () => {
    const { box, sales, warehouse } = await withWarehouse();
    await importGroups(box, [{ provided_id: 'g1', mapping: { [sales]: 'warehouse' } }]);

    expect(
      jsonOutput(await box.ugs('data-sources', 'update', String(warehouse), '--provided-id', 'warehouse-eu', '--json')),
    ).toMatchObject({
      id: warehouse,
      provided_id: 'warehouse-eu',
    });
    expect((await exportGroups(box)).groups).toEqual([
      expect.objectContaining({ provided_id: 'g1', mapping: { [sales]: 'warehouse-eu' } }),
    ]);
    expect(jsonOutput(await box.ugs('groups', 'show', 'g1', '--json'))).toMatchObject({
      mapping: { [sales]: String(warehouse) },
    });
  });

  it('moving it to another schema is refused while a group maps to it; an unknown id fails', async () => {
    const { box, sales, warehouse } = await withWarehouse();
    const region = await createSchema(box, 'region');
    await importGroups(box, [{ provided_id: 'g1', mapping: { [sales]: 'warehouse' } }]);

    const [moved, unknown] = await Promise.all([
      box.ugs('data-sources', 'update', String(warehouse), '--schema-id', String(region)),
      box.ugs('data-sources', 'update', '9999', '--name', 'Nothing'),
    ]);
    expectCleanFailure(moved, /1 user group/);
    expectCleanFailure(unknown, /9999/);
    expect(await listDataSources(box)).toEqual([
      expect.objectContaining({ id: warehouse, schema_id: sales, name: 'warehouse' }),
    ]);
  });
});

describe('ugs data-sources delete', { timeout: 60_000 }, () => {
  it('deletes an unused data source of either environment: a message, or the data source with --json', async () => {
    const { box, sales, warehouse } = await withWarehouse();
    const staging = await createDataSource(box, { providedId: 'staging', schemaId: sales, environment: 'Testing' });

    expect(await box.ugs('data-sources', 'delete', String(warehouse))).toEqual({
      code: 0,
      stdout: `deleted data source ${warehouse} (warehouse)\n`,
      stderr: '',
    });
    expect(jsonOutput(await box.ugs('data-sources', 'delete', String(staging), '--json'))).toEqual({
      id: staging,
      provided_id: 'staging',
      name: 'staging',
      schema_id: sales,
      api_environment_tag: 'Testing',
      shared: false,
    });
    expect(await Promise.all([listDataSources(box), listDataSources(box, 'Testing')])).toEqual([[], []]);
    expect((await auditActions(box, 'data_source.deleted')).map((event) => [event.actor, event.provided_id])).toEqual([
      ['cli', 'staging'],
      ['cli', 'warehouse'],
    ]);

    expectCleanFailure(await box.ugs('data-sources', 'delete', String(warehouse)), new RegExp(`\\b${warehouse}\\b`));
  });

  it('refuses while groups map to it, naming how many, and deletes it once none does', async () => {
    const { box, sales, warehouse } = await withWarehouse();
    const mapped = { mapping: { [sales]: 'warehouse' } };
    await importGroups(box, [
      { provided_id: 'g1', ...mapped },
      { provided_id: 'g2', ...mapped },
      { provided_id: 'g3', ...mapped },
      { provided_id: 'unmapped' },
    ]);

    const [plain, json] = await Promise.all([
      box.ugs('data-sources', 'delete', String(warehouse)),
      box.ugs('data-sources', 'delete', String(warehouse), '--json'),
    ]);
    for (const refused of [plain, json])
      expectCleanFailure(refused, new RegExp(`\\b3 user groups\\b.*data source ${warehouse}\\b`));

    await importGroups(box, [
      { provided_id: 'g1', mapping: {} },
      { provided_id: 'g2', mapping: {} },
    ]);
    expectCleanFailure(await box.ugs('data-sources', 'delete', String(warehouse)), /\b1 user group\b/);
    expect(await listDataSources(box)).toEqual([expect.objectContaining({ id: warehouse })]);
    expect(await auditActions(box, 'data_source.deleted')).toEqual([]);

    await importGroups(box, [{ provided_id: 'g3', mapping: {} }]);
    expect((await box.ugs('data-sources', 'delete', String(warehouse))).code).toBe(0);
    expect(await listDataSources(box)).toEqual([]);
    expect(await auditActions(box, 'data_source.deleted')).toHaveLength(1);
  });
});
