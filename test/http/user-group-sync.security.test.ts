// Sync (docs/api.md#sync-tenants-as-code) over HTTP: who may sync, and that a sync never reaches past its workspace and environment.
import { describe, expect, it } from 'vitest';
import { inject } from '../support/http-client.js';
import { ADMIN, adminReader } from './admin-helpers.js';
import { expectError, expectUnchanged } from './helpers.js';
import { ndjson, SYNC_PATH, syncCall, syncOk } from './sync-helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { listAll } from '../support/paged-list.js';
import { useTestApp } from '../support/test-app.js';

describe('POST /api/admin/user_groups/sync: access and isolation', () => {
  const fixture = useTestApp();

  it.each(['read', 'write'] as const)('refuses a %s API token, changing nothing', async (scope) => {
    const lines = [{ user_group_id: uniqueId('scope') }];
    const response = await expectUnchanged(fixture.t, () => syncCall(fixture.t, lines, { as: { scope } }));
    expectError(response, 403, 'insufficient_scope');
  });

  it('refuses a request without an API token', async () => {
    const response = await inject(fixture.t.app, {
      method: 'POST',
      path: SYNC_PATH,
      rawBody: ndjson([{ user_group_id: uniqueId('anon') }]),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expectError(response, 401, 'unauthenticated');
  });

  it('refuses a body of another media type', async () => {
    const plain = await inject(fixture.t.app, {
      method: 'POST',
      path: SYNC_PATH,
      token: fixture.t.tokens.default.Customer.admin,
      rawBody: '{"user_group_id":"x"}',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(plain, 415, 'unsupported_media_type');
  });

  it("prunes only its own workspace's and environment's groups", async () => {
    const { t } = fixture;
    const tag = uniqueId('shared-tag');
    const id = uniqueId('iso');
    // The same tag and ids in the other workspace and in Testing.
    await syncOk(t, [{ user_group_id: id, tags: [tag] }], { as: { workspace: 'other' } });
    await syncOk(t, [{ user_group_id: id, tags: [tag] }], { as: { environment: 'Testing' } });
    await syncOk(t, [{ user_group_id: id, tags: [tag] }]);

    const pruned = await syncOk(t, [], { rawBody: '[]', array: true, prune: tag });
    expect(pruned.summary).toEqual({ create: 0, update: 0, unchanged: 0, delete: 1 });
    expect(await listAll(adminReader(t), ADMIN.userGroups, 'user_groups', { tag })).toEqual([]);
    const elsewhere = [
      await listAll(adminReader(t, { workspace: 'other' }), ADMIN.userGroups, 'user_groups', { tag }),
      await listAll(adminReader(t, { environment: 'Testing' }), ADMIN.userGroups, 'user_groups', { tag }),
    ];
    expect(elsewhere.map((groups) => groups.map((group) => group.provided_id))).toEqual([[id], [id]]);
  });

  it('acts in the environment the query names, never showing a token', async () => {
    const { t } = fixture;
    const id = uniqueId('env');
    const sync = await syncOk(t, [{ user_group_id: id }], { environment: 'Testing' });
    expect(sync.summary.create).toBe(1);
    expect(JSON.stringify(sync)).not.toMatch(/ugt_/);
    const [group] = await listAll(adminReader(t, { environment: 'Testing' }), ADMIN.userGroups, 'user_groups', {
      q: id,
    });
    expect(group).toMatchObject({ provided_id: id, api_environment_tag: 'Testing' });
    expect(await listAll(adminReader(t), ADMIN.userGroups, 'user_groups', { q: id })).toEqual([]);
  });
});
