// Sync (docs/api.md#sync-tenants-as-code) at its bounds: a prune past the sync's bound is refused before any work; a prune of the
// bound is planned while the server goes on answering; a sync stopped (the server stops, the caller
// has gone) writes nothing.
import { describe, expect, it } from 'vitest';
import { createUserGroupSyncService } from '../../src/domain/user-group-sync/user-group-sync.service.js';
import { expectError } from './helpers.js';
import { SYNC_PATH, ndjson, seedTaggedTree, syncCall } from './sync-helpers.js';
import { send } from '../support/http-client.js';
import { adminCaller, apiToken } from '../support/callers.js';
import { uniqueId } from '../support/unique-id.js';
import { useTestApp } from '../support/test-app.js';
import type { TestApp } from '../support/test-app.js';

const SCALE_TIMEOUT = 600_000;

describe('POST /api/admin/user_groups/sync: prunes at scale', () => {
  const fixture = useTestApp();
  const tag = uniqueId('managed');
  // 10 000 groups in 1 000 trees (a root, nine children), and 10 000 roots the kept file names.
  const pruned = uniqueId('pruned');
  const kept = uniqueId('kept');
  const keptFile = Array.from({ length: 10_000 }, (_, i) => ({ user_group_id: `${kept}-${i}` }));

  const taggedCount = async (t: TestApp) =>
    (await t.runtime.store.listTaggedUserGroupLinks((await adminCaller(t)).tenant, tag, { limit: 100_000 })).length;

  it(
    'refuses a prune that would delete more than 10 000 groups before any work, deleting nothing',
    { timeout: SCALE_TIMEOUT },
    async () => {
      const { t } = fixture;
      await seedTaggedTree(t, pruned, tag, { roots: 1000, childrenEach: 9 });
      await seedTaggedTree(t, kept, tag, { roots: 10_000 });
      for (const dryRun of [true, false]) {
        const response = await syncCall(t, [], { rawBody: '[]', array: true, prune: tag, dryRun });
        expectError(response, 400, 'invalid_request');
        expect(response.body.error.field).toBe('prune');
        expect(response.body.error.message).toContain('more than 10000 user groups');
      }
      expect(await taggedCount(t)).toBe(20_000);
    },
  );

  it('plans a prune of 10 000 groups while /healthz goes on answering', { timeout: SCALE_TIMEOUT }, async () => {
    const { t } = fixture;
    const baseUrl = await t.listen();
    let planned = false;
    const plan = send(baseUrl, {
      method: 'POST',
      path: `${SYNC_PATH}?dry_run=true&prune=${tag}`,
      token: apiToken(t),
      rawBody: ndjson(keptFile),
      headers: { 'content-type': 'application/x-ndjson' },
    }).finally(() => (planned = true));
    // One health check after another for as long as the plan runs: each answered before the plan is.
    let answeredMeanwhile = 0;
    while (!planned) {
      const health = await send(baseUrl, { method: 'GET', path: '/healthz' });
      expect(health.status).toBe(200);
      if (!planned) answeredMeanwhile += 1;
    }
    const response = await plan;
    expect(response.status, response.raw.slice(0, 500)).toBe(200);
    expect(response.body.sync.summary).toEqual({ create: 0, update: 0, unchanged: 10_000, delete: 10_000 });
    // Children first, then their roots.
    const deletes = (response.body.sync.plan as Array<{ action: string; user_group_id: string }>).filter(
      (item) => item.action === 'delete',
    );
    expect(deletes[0]?.user_group_id).toMatch(new RegExp(`^${pruned}-\\d+-\\d$`));
    expect(deletes[9_999]?.user_group_id).toMatch(new RegExp(`^${pruned}-\\d+$`));
    expect(answeredMeanwhile).toBeGreaterThanOrEqual(3);
    expect(await taggedCount(t)).toBe(20_000);
  });

  it(
    'stops a sync whose caller has gone, or in progress when the server stops, writing nothing',
    { timeout: SCALE_TIMEOUT },
    async () => {
      const { t } = fixture;
      const caller = await adminCaller(t);
      const lines = keptFile.map((group, i) => ({ at: { line: i + 1 }, group: { userGroupId: group.user_group_id } }));
      // Gone as the apply is about to start.
      const gone = new AbortController();
      await expect(
        t.runtime.services.userGroupSync.sync(caller, lines, {
          dryRun: false,
          pruneTag: tag,
          signal: gone.signal,
          onApply: () => gone.abort(),
        }),
      ).rejects.toMatchObject({ code: 'unavailable' });
      // Gone while the plan reads.
      const early = new AbortController();
      setImmediate(() => early.abort());
      await expect(
        t.runtime.services.userGroupSync.sync(caller, lines, { dryRun: false, pruneTag: tag, signal: early.signal }),
      ).rejects.toMatchObject({ code: 'unavailable' });
      // The server stops: the sync in progress ends, and later ones are refused.
      const service = createUserGroupSyncService({
        store: t.runtime.store,
        cipher: t.runtime.keys.keyring,
        clock: () => new Date().toISOString(),
        warn: () => undefined,
      });
      const inProgress = service.sync(caller, lines, { dryRun: false, pruneTag: tag });
      service.stop();
      await expect(inProgress).rejects.toMatchObject({ code: 'unavailable' });
      await expect(service.sync(caller, [], { dryRun: true })).rejects.toMatchObject({ code: 'unavailable' });
      expect(await taggedCount(t)).toBe(20_000);

      // Left to run, the same sync deletes the 10 000, children first.
      const applied = await t.runtime.services.userGroupSync.sync(caller, lines, { dryRun: false, pruneTag: tag });
      expect(applied.summary).toEqual({ create: 0, update: 0, unchanged: 10_000, delete: 10_000 });
      expect(await taggedCount(t)).toBe(10_000);
    },
  );
});
