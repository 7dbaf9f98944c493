// Sync (docs/api.md#sync-tenants-as-code) over HTTP: a sync that is refused changes nothing and names the group at fault.
import { describe, expect, it } from 'vitest';
import { expectError, expectUnchanged, seedCatalog } from './helpers.js';
import { fleet, ndjson, syncCall, syncOk, type SyncLine, type SyncRequest } from './sync-helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { useTestApp } from '../support/test-app.js';

describe('POST /api/admin/user_groups/sync refusals', () => {
  const fixture = useTestApp();

  /** Sends the sync and checks the refusal, and that the database is exactly as it was. */
  const refused = async (
    lines: SyncLine[],
    status: number,
    code: string,
    where: { line?: number; index?: number; field?: string },
    request: SyncRequest = {},
  ) => {
    const response = await expectUnchanged(fixture.t, () => syncCall(fixture.t, lines, request));
    expectError(response, status, code);
    const { error } = response.body;
    if (where.field !== undefined) expect(error.field).toBe(where.field);
    expect(error.line).toBe(where.line);
    expect(error.index).toBe(where.index);
    if (where.line !== undefined) expect(error.message).toMatch(new RegExp(`^Line ${where.line}: `));
    if (where.index !== undefined) expect(error.message).toMatch(new RegExp(`^Item ${where.index}: `));
    return error;
  };

  it(
    'refuses a 1 000-group file with one invalid group, naming its line, and writes none of the others',
    { timeout: 120_000 },
    async () => {
      const lines = fleet(uniqueId('bad'), 1000, uniqueId('tag'));
      lines[736] = { ...lines[736], name: '' };
      await refused(lines, 400, 'invalid_field', { line: 737, field: 'name' });
    },
  );

  it('names the index of a JSON array', async () => {
    const lines = fleet(uniqueId('bad'), 5, uniqueId('tag'));
    lines[2] = { ...lines[2], tags: ['a', 'a'] };
    await refused(lines, 400, 'invalid_field', { index: 2, field: 'tags' }, { array: true });
  });

  it.each<[string, (prefix: string) => SyncLine[], number, string, { line?: number; field?: string }]>([
    [
      'a token (never part of the desired state)',
      (p) => [{ user_group_id: p }, { user_group_id: `${p}-2`, token: `ugt_${'0'.repeat(64)}` }],
      400,
      'unknown_field',
      { line: 2, field: 'token' },
    ],
    ['a missing user_group_id', (p) => [{ user_group_id: p }, { name: 'x' }], 400, 'missing_field', { line: 2 }],
    [
      'properties that are not an object',
      (p) => [{ user_group_id: p, properties: [1] }],
      400,
      'invalid_field',
      { line: 1, field: 'properties' },
    ],
    [
      'a group named twice',
      (p) => [{ user_group_id: p }, { user_group_id: `${p}-x` }, { user_group_id: p, name: 'again' }],
      400,
      'invalid_field',
      { line: 3, field: 'user_group_id' },
    ],
    [
      'a parent that exists nowhere',
      (p) => [{ user_group_id: p }, { user_group_id: `${p}-c`, parent_user_group_id: `${p}-nobody` }],
      400,
      'unknown_parent',
      { line: 2, field: 'parent_user_group_id' },
    ],
    [
      'a cycle within the file',
      (p) => [
        { user_group_id: `${p}-a`, parent_user_group_id: `${p}-b` },
        { user_group_id: `${p}-b`, parent_user_group_id: `${p}-a` },
      ],
      409,
      'hierarchy_cycle',
      { line: 1, field: 'parent_user_group_id' },
    ],
    [
      'a tree five levels deep',
      (p) =>
        [0, 1, 2, 3, 4].map((i) => ({
          user_group_id: `${p}-${i}`,
          ...(i ? { parent_user_group_id: `${p}-${i - 1}` } : {}),
        })),
      409,
      'hierarchy_too_deep',
      { line: 5, field: 'parent_user_group_id' },
    ],
    [
      'a data source that does not exist',
      (p) => [{ user_group_id: p, mapping: { 1: 'no-such-data-source' } }],
      400,
      'unknown_schema',
      { line: 1, field: 'mapping' },
    ],
  ])('refuses %s', async (_label, lines, status, code, where) => {
    await refused(lines(uniqueId('err')), status, code, where);
  });

  it('refuses an unknown data source of a known schema, naming the line', async () => {
    const catalog = await seedCatalog(fixture.t);
    const id = uniqueId('err');
    await refused(
      [{ user_group_id: id }, { user_group_id: `${id}-2`, mapping: { [catalog.schemaA]: 'no-such-source' } }],
      400,
      'unknown_data_source',
      { line: 2, field: 'mapping' },
    );
  });

  it('refuses a line that is not JSON, and a line that is not an object', async () => {
    const id = uniqueId('err');
    await refused([], 400, 'invalid_json', { line: 2 }, { rawBody: `{"user_group_id":"${id}"}\n{"user_group_id":\n` });
    await refused([], 400, 'invalid_json', { line: 2 }, { rawBody: `{"user_group_id":"${id}"}\n"text"\n` });
    await refused([], 400, 'invalid_json', { index: 1 }, { rawBody: `[{"user_group_id":"${id}"}, 1]`, array: true });
    await refused([], 400, 'invalid_json', {}, { rawBody: `[{"user_group_id":"${id}"}`, array: true });
    await refused([], 400, 'invalid_json', { line: 3 }, { rawBody: `{"user_group_id":"${id}"}\n\n{"a":1,"a":2}\n` });
    await refused([], 400, 'invalid_json', {}, { rawBody: '   \n' });
  });

  it('refuses more than 10 000 groups', async () => {
    const lines = Array.from({ length: 10_001 }, (_, i) => ({ user_group_id: `g${i}` }));
    await refused(lines, 400, 'invalid_request', {});
  });

  it('refuses a prune that would delete the parent of a group that stays, and changes nothing', async () => {
    const { t } = fixture;
    const prefix = uniqueId('parent');
    const tag = uniqueId('tag');
    const lines = fleet(prefix, 20, tag);
    await syncOk(t, lines);
    // Root 10 is left out, its children stay in the file.
    await refused(
      lines.filter((_, i) => i !== 10),
      409,
      'user_group_has_children',
      { line: 11, field: 'prune' },
      { prune: tag },
    );
    // A child the application made under a tagged root stays (no tag): its parent may not go.
    const child = uniqueId('app-child');
    const caller = {
      tenant: { workspaceId: t.runtime.defaultWorkspace.id, environment: 'Customer' as const },
      scope: 'admin' as const,
      actor: { type: 'cli' as const },
      requestId: null,
    };
    await t.runtime.services.userGroups.getOrCreateUserGroup(caller, {
      userGroupId: child,
      parentUserGroupId: `${prefix}-0`,
    });
    const error = await refused(
      lines.filter((_, i) => i >= 10),
      409,
      'user_group_has_children',
      { field: 'prune' },
      { prune: tag },
    );
    expect(error.message).toContain(child);
  });

  it('refuses in the dry run what the apply refuses: a move under its own descendant, or too deep with its subtree', async () => {
    const { t } = fixture;
    const p = uniqueId('moved');
    // Stored: y > x; a > b > c; r > s.
    await syncOk(t, [
      { user_group_id: `${p}-y` },
      { user_group_id: `${p}-x`, parent_user_group_id: `${p}-y` },
      { user_group_id: `${p}-a` },
      { user_group_id: `${p}-b`, parent_user_group_id: `${p}-a` },
      { user_group_id: `${p}-c`, parent_user_group_id: `${p}-b` },
      { user_group_id: `${p}-r` },
      { user_group_id: `${p}-s`, parent_user_group_id: `${p}-r` },
    ]);
    for (const dryRun of [true, false]) {
      const cycle = [{ user_group_id: `${p}-y`, parent_user_group_id: `${p}-x` }];
      await refused(cycle, 409, 'hierarchy_cycle', { line: 1, field: 'parent_user_group_id' }, { dryRun });
      // a's subtree (three levels) under s (two) would be five deep.
      const deep = [{ user_group_id: `${p}-n` }, { user_group_id: `${p}-a`, parent_user_group_id: `${p}-s` }];
      await refused(deep, 409, 'hierarchy_too_deep', { line: 2, field: 'parent_user_group_id' }, { dryRun });
    }
    // With c moved out of a's subtree first, the same move fits.
    const fits = [
      { user_group_id: `${p}-c`, parent_user_group_id: null },
      { user_group_id: `${p}-a`, parent_user_group_id: `${p}-s` },
    ];
    expect((await syncOk(t, fits, { dryRun: true })).summary).toMatchObject({ update: 2 });
    expect((await syncOk(t, fits)).summary).toMatchObject({ update: 2 });
  });

  it('refuses dry_run and prune values the query does not allow', async () => {
    const lines = [{ user_group_id: uniqueId('q') }];
    const bad = await syncCall(fixture.t, lines, { rawBody: ndjson(lines), prune: '' });
    expectError(bad, 400, 'invalid_field');
    expect(bad.body.error.field).toBe('prune');
  });
});
