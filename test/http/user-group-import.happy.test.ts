// POST /api/admin/user_groups/import: the import suite's cases (test/support/import-cases.ts) over
// HTTP, with the CLI's summary; the dry run; replace_tokens as an audited rotation; NDJSON and arrays.
import { describe, expect, it } from 'vitest';
import { adminCaller } from '../support/callers.js';
import {
  BROKEN_TREE,
  BROKEN_TREE_REFUSED,
  mixedImportFile,
  nativeToken,
  TREE_CHILDREN_FIRST,
} from '../support/import-cases.js';
import { useTestApp } from '../support/test-app.js';
import { uniqueId } from '../support/unique-id.js';
import { ADMIN, adminOk } from './admin-helpers.js';
import { expectUnchanged, seedSchema } from './helpers.js';
import { importOk } from './import-helpers.js';

describe('POST /api/admin/user_groups/import: the import suite over HTTP', () => {
  const fixture = useTestApp();

  /** Schema `sales` and a data source of it in Customer, as the CLI suite's catalog. */
  async function salesCatalog() {
    const sales = await seedSchema(fixture.t);
    const warehouse = uniqueId('warehouse');
    await fixture.t.runtime.services.dataSources.createDataSource(await adminCaller(fixture.t), {
      providedId: warehouse,
      name: 'Warehouse',
      schemaId: sales,
    });
    return { sales, warehouse };
  }

  const groupsOf = async (as: { workspace?: 'default' | 'other'; environment?: 'Customer' | 'Testing' } = {}) =>
    (await adminOk(fixture.t, { path: ADMIN.userGroups, query: { limit: '1000' }, as })).user_groups as Array<{
      provided_id: string;
      token?: string;
    }>;

  it('imports the good lines, refuses each bad one by line and reason, and stores nothing of them; rerun: unchanged', async () => {
    const { lines, good, bad } = mixedImportFile(await salesCatalog(), 'http', '1');
    const summary = await importOk(fixture.t, lines);
    expect(summary).toEqual({
      dry_run: false,
      created: good.length,
      updated: 0,
      unchanged: 0,
      rejected: bad.map(({ line }) => ({ line, reason: expect.any(String) })),
    });
    summary.rejected.forEach(({ reason }, index) => expect(reason).toMatch(bad[index]!.reason));
    const stored = await groupsOf();
    expect(stored.map((group) => `Customer/${group.provided_id}`).sort()).toEqual([...good].sort());
    expect(stored.find((group) => group.provided_id === 'good-token')?.token).toBe(nativeToken('1'));
    expect(await groupsOf({ environment: 'Testing' })).toEqual([]);

    const again = await expectUnchanged(fixture.t, () => importOk(fixture.t, lines));
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: good.length });
    expect(again.rejected.map(({ line }) => line)).toEqual(bad.map(({ line }) => line));
  });
});

describe('POST /api/admin/user_groups/import: a tree, in any order', () => {
  const fixture = useTestApp();

  it('imports a tree whose children come before their parents; the same lines again change nothing', async () => {
    expect(await importOk(fixture.t, TREE_CHILDREN_FIRST)).toMatchObject({ created: 5, unchanged: 0, rejected: [] });
    const city = await adminOk(fixture.t, { path: `${ADMIN.userGroups}`, query: { q: 'city' } });
    expect(city.user_groups[0]).toMatchObject({ parent_user_group_id: 'country' });
    expect(await importOk(fixture.t, [...TREE_CHILDREN_FIRST].reverse())).toMatchObject({
      created: 0,
      updated: 0,
      unchanged: 5,
      rejected: [],
    });
  });

  it('refuses lines whose parent is nowhere or whose parents form a cycle, and imports the rest', async () => {
    const summary = await importOk(fixture.t, BROKEN_TREE);
    expect(summary).toMatchObject({ created: 1, updated: 0, unchanged: 0 });
    expect(summary.rejected.map(({ line }) => line)).toEqual(BROKEN_TREE_REFUSED.lines);
    for (const { reason } of summary.rejected) expect(reason).toMatch(BROKEN_TREE_REFUSED.reason);
  });
});
