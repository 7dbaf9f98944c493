// What an Idempotency-Key may make the service keep: nothing for a sync's dry run (it changes
// nothing), and no response over 1 MiB (answered, said not kept, and run again on a retry).
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_KEPT_RESPONSE_BYTES } from '../../src/domain/idempotency/idempotency.service.js';
import { inject } from '../support/http-client.js';
import { withQuery } from '../support/paged-list.js';
import { useTestApp, type TestApp } from '../support/test-app.js';
import { uniqueId } from '../support/unique-id.js';
import { expectSuccess } from './helpers.js';
import { fleet, ndjson, SYNC_PATH, type SyncLine } from './sync-helpers.js';

/** The idempotency records of one key (the store keeps its SHA-256, never the key). */
const recordsOf = async (t: TestApp, key: string) =>
  (await t.reader()).count(
    'idempotency_keys WHERE key_hash = ?',
    createHash('sha256').update(key, 'utf8').digest('hex'),
  );

function syncWithKey(t: TestApp, lines: SyncLine[], key: string, dryRun: boolean) {
  return inject(t.app, {
    method: 'POST',
    path: withQuery(SYNC_PATH, { dry_run: dryRun ? 'true' : undefined }),
    token: t.tokens.default.Customer.admin,
    rawBody: ndjson(lines),
    headers: { 'content-type': 'application/x-ndjson', 'idempotency-key': key },
  });
}

describe('Idempotency-Key: what is kept', () => {
  const fixture = useTestApp();

  it('keeps nothing for three dry runs of a large file, each with a fresh key', async () => {
    const { t } = fixture;
    const lines = fleet(uniqueId('dry'), 2000, uniqueId('tag')).map((line) => ({
      ...line,
      properties: { blob: 'p'.repeat(1000) },
    }));
    const before = await (await t.reader()).count('idempotency_keys');
    for (const key of [uniqueId('k1'), uniqueId('k2'), uniqueId('k3')]) {
      const response = await syncWithKey(t, lines, key, true);
      expect(expectSuccess(response).sync).toMatchObject({ dry_run: true, summary: { create: 2000 } });
      expect(response.headers['idempotent-replayed']).toBeUndefined();
      expect(await recordsOf(t, key)).toBe(0);
    }
    expect(await (await t.reader()).count('idempotency_keys')).toBe(before);
  });

  it('answers a dry run again with the same key as a new request, never a replay', async () => {
    const { t } = fixture;
    const key = uniqueId('again');
    const id = uniqueId('dry-again');
    await syncWithKey(t, [{ user_group_id: id }], key, true);
    const second = await syncWithKey(t, [{ user_group_id: id, name: 'Other' }], key, true);
    // Another body with the same key: a kept write would be 409 idempotency_key_reused.
    expect(expectSuccess(second).sync.summary.create).toBe(1);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
  });

  it('answers an apply whose plan is over 1 MiB but keeps nothing, says so, and runs a retry again', async () => {
    const { t } = fixture;
    const lines = fleet(uniqueId('big'), 1000, uniqueId('tag')).map((line) => ({
      ...line,
      properties: { blob: 'q'.repeat(1200) },
    }));
    const key = uniqueId('big-key');
    const first = await syncWithKey(t, lines, key, false);
    expect(first.raw.length).toBeGreaterThan(MAX_KEPT_RESPONSE_BYTES);
    expect(expectSuccess(first).sync).toMatchObject({ applied: true, summary: { create: 1000 } });
    expect(first.headers['idempotent-stored']).toBe('false');
    expect(await recordsOf(t, key)).toBe(0);

    // The retry runs: the groups are there already, so it plans nothing and writes nothing.
    const retry = await syncWithKey(t, lines, key, false);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(expectSuccess(retry).sync).toMatchObject({ applied: false, summary: { unchanged: 1000 } });
  });

  it('keeps a small apply, and replays it', async () => {
    const { t } = fixture;
    const key = uniqueId('small-key');
    const lines = [{ user_group_id: uniqueId('small') }];
    const first = await syncWithKey(t, lines, key, false);
    expect(first.headers['idempotent-stored']).toBeUndefined();
    expect(await recordsOf(t, key)).toBe(1);
    const retry = await syncWithKey(t, lines, key, false);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.raw).toBe(first.raw);
  });
});
