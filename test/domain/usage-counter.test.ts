// The usage recorder's windows (docs/api.md#usage-per-group): each flush writes what was counted since the last one, once
// per group and day, whatever happened to the writes before it.
import { describe, expect, it } from 'vitest';
import { createUsageRecorder, USAGE_WRITE_SLICE } from '../../src/domain/usage/usage-counter.js';
import type { UsageIncrement } from '../../src/domain/usage/usage.records.js';
import type { Tenant } from '../../src/domain/tenancy.js';
import { usageIncrement } from '../support/usage-increment.js';

const tenant: Tenant = { workspaceId: 7, environment: 'Customer' };
const DAY_ONE = Date.UTC(2026, 10, 26, 23, 59, 59);
const DAY_TWO = Date.UTC(2026, 10, 27, 0, 0, 1);

/** A recorder over a port that keeps every batch it is given, and fails the next write on request. */
function recorderWithBatches(now: () => number = () => DAY_ONE) {
  const batches: UsageIncrement[][] = [];
  let failNext = false;
  const recorder = createUsageRecorder({
    store: {
      addUsage: async (batch) => {
        if (failNext) {
          failNext = false;
          throw new Error('database is locked');
        }
        batches.push(batch.map((increment) => ({ ...increment })));
      },
      pruneUsage: async () => 0,
    },
    flushMs: 3_600_000,
    now,
  });
  return { recorder, batches, failNextWrite: () => (failNext = true) };
}

const increment = (teamId: number, day: string, counts: Partial<UsageIncrement>) =>
  usageIncrement(tenant, teamId, day, counts);

describe('usage recorder', () => {
  it('writes only what was counted since the last flush, and nothing for a group not counted since', async () => {
    const { recorder, batches } = recorderWithBatches();
    recorder.read(tenant, 1);
    recorder.read(tenant, 1);
    recorder.minted(tenant, 2);
    await recorder.flush();
    recorder.verified(tenant, 1);
    await recorder.flush();
    await recorder.flush();
    recorder.read(tenant, 2);
    await recorder.stop();
    expect(batches).toEqual([
      [increment(1, '2026-11-26', { reads: 2 }), increment(2, '2026-11-26', { embedTokensMinted: 1 })],
      [increment(1, '2026-11-26', { verifications: 1 })],
      [increment(2, '2026-11-26', { reads: 1 })],
    ]);
  });

  it('keeps the counts of a failed write for the next flush, one increment per group with what came since', async () => {
    const { recorder, batches, failNextWrite } = recorderWithBatches();
    recorder.read(tenant, 1);
    recorder.read(tenant, 3);
    failNextWrite();
    await recorder.flush();
    expect(batches).toEqual([]);
    recorder.read(tenant, 1);
    await recorder.flush();
    expect(batches).toEqual([[increment(1, '2026-11-26', { reads: 2 }), increment(3, '2026-11-26', { reads: 1 })]]);
  });

  it('writes the counts of a day that ended under that day, and the new day under its own', async () => {
    let at = DAY_ONE;
    const { recorder, batches } = recorderWithBatches(() => at);
    recorder.read(tenant, 1);
    at = DAY_TWO;
    recorder.read(tenant, 1);
    recorder.verified(tenant, 4);
    await recorder.flush();
    expect(batches).toEqual([
      [
        increment(1, '2026-11-26', { reads: 1 }),
        increment(1, '2026-11-27', { reads: 1 }),
        increment(4, '2026-11-27', { verifications: 1 }),
      ],
    ]);
  });

  it('tells its listeners of each batch counted, before the write, and of nothing when nothing was counted', async () => {
    const { recorder } = recorderWithBatches();
    const told: UsageIncrement[][] = [];
    recorder.observe((batch) => told.push(batch.map((counted) => ({ ...counted }))));
    recorder.read(tenant, 5);
    await recorder.flush();
    await recorder.flush();
    expect(told).toEqual([[increment(5, '2026-11-26', { reads: 1 })]]);
  });

  it('writes a flush of more groups than a slice in slices, the event loop taking what waited between them', async () => {
    const events: string[] = [];
    const recorder = createUsageRecorder({
      store: {
        addUsage: async (batch) => {
          // I/O that arrives during a write (here, a callback queued by it) runs before the next slice.
          if (events.length === 0) setImmediate(() => events.push('another request'));
          events.push(`write of ${batch.length}`);
        },
        pruneUsage: async () => 0,
      },
      flushMs: 3_600_000,
      now: () => DAY_ONE,
    });
    for (let teamId = 1; teamId <= 2 * USAGE_WRITE_SLICE + 5; teamId += 1) recorder.read(tenant, teamId);
    await recorder.flush();
    expect(events).toEqual([
      `write of ${USAGE_WRITE_SLICE}`,
      'another request',
      `write of ${USAGE_WRITE_SLICE}`,
      'write of 5',
    ]);
  });

  it('keeps a failed slice and the slices after it for the next flush, and writes every count once', async () => {
    const written = new Map<number, number>();
    let writes = 0;
    const recorder = createUsageRecorder({
      store: {
        addUsage: async (batch) => {
          writes += 1;
          if (writes === 2) throw new Error('database is locked');
          for (const { teamId, reads } of batch) written.set(teamId, (written.get(teamId) ?? 0) + reads);
        },
        pruneUsage: async () => 0,
      },
      flushMs: 3_600_000,
      now: () => DAY_ONE,
    });
    const groups = 2 * USAGE_WRITE_SLICE + 1;
    for (let teamId = 1; teamId <= groups; teamId += 1) recorder.read(tenant, teamId);
    await recorder.flush();
    expect(written.size).toBe(USAGE_WRITE_SLICE);
    recorder.read(tenant, 1);
    await recorder.flush();
    // The first flush: a slice written, the next refused; the second: the 2 001 kept and the new count, in two slices.
    expect(writes).toBe(4);
    expect(written.size).toBe(groups);
    expect(written.get(1)).toBe(2);
    expect([...written.values()].filter((reads) => reads !== 1)).toEqual([2]);
  });
});
