import { describe, expect, it } from 'vitest';
import { auditContext, createGroup } from '../store-fixtures.js';
import type { ContractContext } from './context.js';
import { usageIncrement } from '../../support/usage-increment.js';
import { TOP_CANDIDATES_SPARE } from '../../../src/domain/usage/usage.rules.js';

export function describeUsageContract(t: ContractContext): void {
  describe('usage', () => {
    const range = { since: '2026-11-01', until: '2026-11-30' };

    it('adds counts to a day, never replaces them, and reads one group’s days in order', async () => {
      const group = await createGroup(t.store, t.fx.customer, 'acme-1');
      await t.store.addUsage([
        usageIncrement(t.fx.customer, group.teamId, '2026-11-21', { reads: 2, verifications: 1 }),
        usageIncrement(t.fx.customer, group.teamId, '2026-11-20', { embedTokensMinted: 4 }),
      ]);
      // A second process flushing the same day: its counts add up with the first's.
      await t.store.addUsage([
        usageIncrement(t.fx.customer, group.teamId, '2026-11-21', { reads: 3, embedTokensMinted: 1 }),
      ]);
      await t.store.addUsage([]);
      expect(await t.store.listUsageDays(t.fx.customer, group.teamId, range)).toEqual([
        { day: '2026-11-20', embedTokensMinted: 4, verifications: 0, reads: 0 },
        { day: '2026-11-21', embedTokensMinted: 1, verifications: 1, reads: 5 },
      ]);
      // Both ends of the range are included, nothing outside it.
      expect(
        await t.store.listUsageDays(t.fx.customer, group.teamId, { since: '2026-11-21', until: '2026-11-21' }),
      ).toHaveLength(1);
      expect(
        await t.store.listUsageDays(t.fx.customer, group.teamId, { since: '2026-11-22', until: '2026-11-30' }),
      ).toEqual([]);
    });

    it('adds concurrent batches of the same rows without losing any', async () => {
      const group = await createGroup(t.store, t.fx.customer, 'acme-2');
      const batch = [usageIncrement(t.fx.customer, group.teamId, '2026-11-21', { verifications: 1 })];
      await Promise.all(Array.from({ length: 20 }, () => t.store.addUsage(batch)));
      expect(await t.store.listUsageDays(t.fx.customer, group.teamId, range)).toEqual([
        { day: '2026-11-21', embedTokensMinted: 0, verifications: 20, reads: 0 },
      ]);
    });

    it('keeps tenants apart: another environment or workspace reads nothing of the group', async () => {
      const group = await createGroup(t.store, t.fx.customer, 'acme-3');
      await t.store.addUsage([usageIncrement(t.fx.customer, group.teamId, '2026-11-21', { reads: 1 })]);
      expect(await t.store.listUsageDays(t.fx.testing, group.teamId, range)).toEqual([]);
      expect(await t.store.listUsageDays(t.fx.otherCustomer, group.teamId, range)).toEqual([]);
      expect(await t.store.listTopUsage(t.fx.testing, { ...range, metric: 'reads', limit: 10 })).toEqual([]);
      expect(await t.store.listTopUsage(t.fx.otherCustomer, { ...range, metric: 'reads', limit: 10 })).toEqual([]);
    });

    it('lists the busiest existing groups by the metric asked, summed over the range, ties by team id', async () => {
      const a = await createGroup(t.store, t.fx.customer, 'a', { name: 'Group A' });
      const b = await createGroup(t.store, t.fx.customer, 'b');
      const c = await createGroup(t.store, t.fx.customer, 'c');
      const gone = await createGroup(t.store, t.fx.customer, 'gone');
      await t.store.addUsage([
        usageIncrement(t.fx.customer, a.teamId, '2026-11-20', { verifications: 2, reads: 9 }),
        usageIncrement(t.fx.customer, a.teamId, '2026-11-21', { verifications: 2 }),
        usageIncrement(t.fx.customer, b.teamId, '2026-11-21', { verifications: 5, embedTokensMinted: 1 }),
        usageIncrement(t.fx.customer, c.teamId, '2026-11-21', { verifications: 4 }),
        usageIncrement(t.fx.customer, c.teamId, '2026-10-01', { verifications: 100 }),
        usageIncrement(t.fx.customer, gone.teamId, '2026-11-21', { verifications: 50 }),
      ]);
      await t.store.deleteUserGroup(t.fx.customer, gone.teamId, gone.version, auditContext());
      const top = await t.store.listTopUsage(t.fx.customer, { ...range, metric: 'verifications', limit: 10 });
      expect(top).toEqual([
        { teamId: b.teamId, providedId: 'b', name: 'Group b', embedTokensMinted: 1, verifications: 5, reads: 0 },
        { teamId: a.teamId, providedId: 'a', name: 'Group A', embedTokensMinted: 0, verifications: 4, reads: 9 },
        { teamId: c.teamId, providedId: 'c', name: 'Group c', embedTokensMinted: 0, verifications: 4, reads: 0 },
      ]);
      expect(
        (await t.store.listTopUsage(t.fx.customer, { ...range, metric: 'verifications', limit: 2 })).map(
          (g) => g.providedId,
        ),
      ).toEqual(['b', 'a']);
      // Groups with none of the metric are left out.
      expect(
        (await t.store.listTopUsage(t.fx.customer, { ...range, metric: 'embed_tokens_minted', limit: 10 })).map(
          (g) => g.providedId,
        ),
      ).toEqual(['b']);
      expect(
        (await t.store.listTopUsage(t.fx.customer, { ...range, metric: 'reads', limit: 10 })).map((g) => g.providedId),
      ).toEqual(['a']);
    });

    it('ranks past more deleted groups than one round of candidates holds, ties at the limit by team id', async () => {
      // More deleted groups above the survivors than a first round ranks (limit + the spare): a second round is needed.
      const deleted = TOP_CANDIDATES_SPARE + 5;
      const gone = [];
      for (let i = 0; i < deleted; i++) gone.push(await createGroup(t.store, t.fx.customer, `gone-${i}`));
      const [x, y, z, quiet] = [
        await createGroup(t.store, t.fx.customer, 'x'),
        await createGroup(t.store, t.fx.customer, 'y'),
        await createGroup(t.store, t.fx.customer, 'z'),
        await createGroup(t.store, t.fx.customer, 'quiet'),
      ];
      await t.store.addUsage([
        ...gone.map((g, i) => usageIncrement(t.fx.customer, g.teamId, '2026-11-10', { verifications: 100 + i })),
        // z before y by count; x and y tie, and the lower team id (x, created first) goes first.
        usageIncrement(t.fx.customer, x.teamId, '2026-11-10', { verifications: 3 }),
        usageIncrement(t.fx.customer, y.teamId, '2026-11-11', { verifications: 1 }),
        usageIncrement(t.fx.customer, y.teamId, '2026-11-12', { verifications: 2 }),
        usageIncrement(t.fx.customer, z.teamId, '2026-11-12', { verifications: 7 }),
        // Counted, but none of the metric asked.
        usageIncrement(t.fx.customer, quiet.teamId, '2026-11-12', { reads: 50 }),
      ]);
      for (const g of gone) await t.store.deleteUserGroup(t.fx.customer, g.teamId, g.version, auditContext());
      const top = async (limit: number) =>
        (await t.store.listTopUsage(t.fx.customer, { ...range, metric: 'verifications', limit })).map(
          (g) => g.providedId,
        );
      expect(await top(1)).toEqual(['z']);
      // The tie at the limit: x (lower team id) is in, y is out.
      expect(await top(2)).toEqual(['z', 'x']);
      expect(await top(3)).toEqual(['z', 'x', 'y']);
      // Fewer groups with some of the metric than the limit: those, and not the group with none of it.
      expect(await top(10)).toEqual(['z', 'x', 'y']);
      expect(await top(100)).toEqual(['z', 'x', 'y']);
    });

    it('prunes the days before a day, and only those', async () => {
      const group = await createGroup(t.store, t.fx.customer, 'acme-4');
      await t.store.addUsage([
        usageIncrement(t.fx.customer, group.teamId, '2025-10-01', { reads: 1 }),
        usageIncrement(t.fx.customer, group.teamId, '2025-10-02', { reads: 1 }),
        usageIncrement(t.fx.customer, group.teamId, '2025-10-03', { reads: 1 }),
      ]);
      expect(await t.store.pruneUsage('2025-10-03')).toBe(2);
      expect(await t.store.pruneUsage('2025-10-03')).toBe(0);
      expect(
        await t.store.listUsageDays(t.fx.customer, group.teamId, { since: '2025-01-01', until: '2025-12-31' }),
      ).toEqual([{ day: '2025-10-03', embedTokensMinted: 0, verifications: 0, reads: 1 }]);
    });
  });
}
