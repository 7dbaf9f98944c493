// A group's merged (computed) properties are bounded like its own (docs/api.md#hierarchy-demo-groups-and-tags), and
// admin pages are bounded by bytes as well as by count.
import Database from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/domain/common.records.js';
import type { TestApp } from '../support/test-app.js';
import { ADMIN, adminCall } from './admin-helpers.js';
import { expectError, expectSuccess, snapshotDatabase } from './helpers.js';
import { injectClient, socketClient } from '../support/http-client.js';
import { uniqueId } from '../support/unique-id.js';
import { adminCaller, apiToken } from '../support/callers.js';
import { userGroupApi } from '../support/user-group-api.js';
import { useTestApp } from '../support/test-app.js';

const BOUND = 64 * 1024;

/** One key holding a string of `chars` characters: about that many bytes serialised. */
const filled = (key: string, chars: number): JsonObject => ({ [key]: 'x'.repeat(chars) });

/** Writes a group's properties behind the service's back: a database from before the bound. */
async function writePropertiesRaw(t: TestApp, providedId: string, properties: JsonObject): Promise<void> {
  const text = JSON.stringify(properties);
  if (t.db.engine === 'sqlite') {
    const db = new Database(t.databasePath!, { fileMustExist: true });
    try {
      db.prepare('UPDATE user_groups SET properties = ? WHERE provided_id = ?').run(text, providedId);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: t.db.url });
  await client.connect();
  try {
    await client.query('UPDATE user_groups SET properties = $1::json WHERE provided_id = $2', [text, providedId]);
  } finally {
    await client.end();
  }
}

describe('computed_properties are bounded at 64 KiB', () => {
  const fixture = useTestApp();
  const api = () => userGroupApi(injectClient(fixture.t.app), apiToken(fixture.t, { scope: 'write' }));

  const create = async (id: string, properties: JsonObject | null, parent?: string) =>
    expectSuccess(
      await api().getOrCreate({
        user_group_id: id,
        properties,
        ...(parent === undefined ? {} : { parent_user_group_id: parent }),
      }),
    ).user_group;

  /** Sends the request, expects a 400 naming `field` and the group, and checks that nothing changed. */
  const refused = async (send: () => ReturnType<ReturnType<typeof api>['update']>, field: string, group: string) => {
    const before = await snapshotDatabase(fixture.t);
    const res = await send();
    expectError(res, 400, 'invalid_field', field);
    expect(res.body.error.message).toContain(JSON.stringify(group));
    expect(res.body.error.message).toContain(String(BOUND));
    expect(await snapshotDatabase(fixture.t)).toEqual(before);
  };

  it('refuses the amplification setup at the link that would pass the bound (the issue: three ancestors of ~63 KB)', async () => {
    const first = uniqueId('ancestor');
    const second = uniqueId('ancestor');
    await create(first, filled('a', 63_000));
    await refused(
      () => api().getOrCreate({ user_group_id: second, properties: filled('b', 63_000), parent_user_group_id: first }),
      'parent_user_group_id',
      second,
    );
  });

  it('counts a key that a nearer level overrides once: the merge, not the sum of the levels', async () => {
    const root = uniqueId('root');
    await create(root, filled('x', 60_000));
    const child = await create(uniqueId('child'), filled('x', 60_000), root);
    expect(Buffer.byteLength(JSON.stringify(child.computed_properties))).toBeLessThanOrEqual(BOUND);
  });

  it("refuses a change of an ancestor's properties that would push a descendant past the bound, naming that descendant", async () => {
    const root = uniqueId('root');
    const child = uniqueId('child');
    await create(root, filled('a', 30_000));
    await create(child, filled('b', 30_000), root);
    await create(uniqueId('grandchild'), filled('c', 1000), child);
    await refused(() => api().update({ user_group_id: root, properties: filled('a', 40_000) }), 'properties', child);
    // Shrinking is always allowed.
    expectSuccess(await api().update({ user_group_id: root, properties: filled('a', 10_000) }));
  });

  it('refuses dropping a key that shadowed a larger inherited value when the merge then passes the bound', async () => {
    const root = uniqueId('root');
    const child = uniqueId('child');
    await create(root, filled('x', 40_000));
    await create(child, { ...filled('z', 30_000), x: 'short' }, root);
    await refused(() => api().update({ user_group_id: child, properties: filled('z', 30_000) }), 'properties', child);
  });

  it('refuses moving a group (and its subtree) under a parent whose properties would push it past the bound', async () => {
    const heavy = uniqueId('heavy');
    const moving = uniqueId('moving');
    const below = uniqueId('below');
    await create(heavy, filled('a', 40_000));
    await create(moving, filled('b', 10_000));
    await create(below, filled('c', 20_000), moving);
    // The moved group alone would fit (50 KB); its child would not (70 KB).
    await refused(
      () => api().update({ user_group_id: moving, parent_user_group_id: heavy }),
      'parent_user_group_id',
      below,
    );
  });

  it('does not lock out a group already over the bound: writes that do not make it larger pass, growing it is refused', async () => {
    const root = uniqueId('root');
    const child = uniqueId('over');
    await create(root, filled('a', 40_000));
    await create(child, filled('b', 1), root);
    await writePropertiesRaw(fixture.t, child, filled('b', 40_000));
    expectSuccess(await api().update({ user_group_id: child, name: 'renamed', tags: ['still-writable'] }));
    expectSuccess(await api().update({ user_group_id: child, properties: filled('b', 39_000) }));
    expectSuccess(await api().update({ user_group_id: root, properties: filled('a', 39_000) }));
    await refused(() => api().update({ user_group_id: child, properties: filled('b', 39_500) }), 'properties', child);
    await refused(() => api().update({ user_group_id: root, properties: filled('a', 39_500) }), 'properties', child);
  });

  it('refuses an imported line that would pass the bound, and writes the others', async () => {
    const root = uniqueId('root');
    await create(root, filled('a', 60_000));
    const fits = uniqueId('fits');
    const tooLarge = uniqueId('too-large');
    const summary = await fixture.t.runtime.services.userGroupTransfer.importUserGroups(await adminCaller(fixture.t), [
      { line: 1, group: { provided_id: fits, properties: filled('b', 1000), parent_user_group_id: root } },
      { line: 2, group: { provided_id: tooLarge, properties: filled('c', 10_000), parent_user_group_id: root } },
    ]);
    expect(summary.created).toBe(1);
    expect(summary.rejected).toEqual([{ line: 2, reason: expect.stringContaining(JSON.stringify(tooLarge)) }]);
  });

  it('lets exactly one of two racing writes on one tree pass when together they would pass the bound', async () => {
    const client = socketClient(await fixture.t.listen());
    const racing = userGroupApi(client, apiToken(fixture.t, { scope: 'write' }));
    for (let round = 0; round < 5; round += 1) {
      const root = uniqueId('race-root');
      const child = uniqueId('race-child');
      await create(root, filled('r', 30_000));
      await create(child, filled('c', 1), root);
      // Each alone fits (50 KB and 60 KB merged in the child); both would make the child 80 KB.
      const results = await Promise.all([
        racing.update({ user_group_id: root, properties: { ...filled('r', 30_000), ...filled('s', 20_000) } }),
        racing.update({ user_group_id: child, properties: filled('c', 30_000) }),
      ]);
      expect(results.map((res) => res.status).sort()).toEqual([200, 400]);
      const shown = expectSuccess(await api().getOrCreate({ user_group_id: child })).user_group;
      expect(Buffer.byteLength(JSON.stringify(shown.computed_properties))).toBeLessThanOrEqual(BOUND);
    }
  });
});

describe('admin pages are bounded by bytes as well as by count', () => {
  const fixture = useTestApp();

  it('keeps a 1000-group page of the amplification tree under a few MB, and the cursor reaches every group', async () => {
    const caller = await adminCaller(fixture.t);
    const groups = fixture.t.runtime.services.userGroups;
    let parent: string | undefined;
    // Three ancestors whose merge is just under the bound, then 1000 tiny children of the lowest.
    for (const key of ['a', 'b', 'c']) {
      const id = uniqueId(`ancestor-${key}`);
      await groups.getOrCreateUserGroup(caller, {
        userGroupId: id,
        properties: filled(key, 21_000),
        ...(parent === undefined ? {} : { parentUserGroupId: parent }),
      });
      parent = id;
    }
    const children = Array.from({ length: 1000 }, (_, child) => ({
      line: child + 1,
      group: { provided_id: uniqueId('tiny'), properties: { n: child }, parent_user_group_id: parent! },
    }));
    expect((await fixture.t.runtime.services.userGroupTransfer.importUserGroups(caller, children)).created).toBe(1000);

    const seen = new Set<number>();
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await adminCall(fixture.t, {
        path: ADMIN.userGroups,
        query: { limit: 1000, parent, ...(cursor === undefined ? {} : { cursor }) },
      });
      const body = expectSuccess(res);
      expect(Buffer.byteLength(res.raw)).toBeLessThan(5 * 1024 * 1024);
      for (const group of body.user_groups) seen.add(group.team_id);
      cursor = body.next_cursor ?? undefined;
      pages += 1;
    } while (cursor !== undefined);
    expect(seen.size).toBe(1000);
    expect(pages).toBeGreaterThan(1);
  });
});
