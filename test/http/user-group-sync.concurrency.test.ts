// Two syncs of one environment, from two instances on one database, run one after the other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { ADMIN, adminOk, adminReader } from './admin-helpers.js';
import { fleet, syncOk } from './sync-helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { listAll } from '../support/paged-list.js';

describe('two syncs at once', () => {
  let first: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    first = await createTestApp();
    // A second instance: its own connections (pool or SQLite handle) and its own process-local queue.
    second = await createTestApp({ database: first.db });
  });

  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it('do not interleave: each applies whole, one after the other, on what the other left', async () => {
    const prefix = uniqueId('race');
    const tag = uniqueId('tag');
    const base = fleet(prefix, 300, tag);
    await syncOk(first, base);
    const by = (who: string) => base.map((line) => ({ ...line, properties: { by: who } }));

    const [a, b] = await Promise.all([syncOk(first, by('a')), syncOk(second, by('b'))]);
    expect([a.applied, b.applied]).toEqual([true, true]);
    expect([a.summary.update, b.summary.update]).toEqual([300, 300]);

    // Every group ends with the values of the sync that applied last, none with a mix.
    const groups = await listAll(adminReader(first), ADMIN.userGroups, 'user_groups', { tag });
    const values = new Set(groups.map((group) => group.properties.by));
    expect(values.size).toBe(1);

    // The audit events of each sync form one unbroken run: no event of the other falls between.
    const events = (
      await adminOk(first, { path: ADMIN.auditEvents, query: { action: 'user_group.updated', limit: 600 } })
    ).audit_events as Array<{ id: number; sync_id: string }>;
    const runs = events
      .sort((x, y) => x.id - y.id)
      .map((event) => event.sync_id)
      .filter((id, index, all) => index === 0 || all[index - 1] !== id);
    expect(runs).toHaveLength(2);
    expect(new Set(runs)).toEqual(new Set([a.id, b.id]));
    // The last run's values are the ones that stayed.
    expect(runs[1]).toBe([...values][0] === 'a' ? a.id : b.id);
  });
});
