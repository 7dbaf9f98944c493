import { describe, expect, it } from 'vitest';
import { auditContext, expectAppError, newGroup, T0 } from '../store-fixtures.js';
import type { ContractContext } from './context.js';

export function describeStoreLifecycleContract(t: ContractContext): void {
  describe('store lifecycle', () => {
    it('reports its connection pool as consistent figures, or null for an engine without one', async () => {
      await Promise.all([t.store.ping(), t.store.findWorkspaceById(t.fx.workspace.id), t.store.listWorkspaces()]);
      const stats = t.store.connectionStats();
      if (stats !== null) {
        expect(stats.total).toBeGreaterThanOrEqual(1);
        expect(stats.idle).toBeGreaterThanOrEqual(0);
        expect(stats.idle).toBeLessThanOrEqual(stats.total);
        // Every call above has settled: nobody is queued for a connection.
        expect(stats.waiting).toBe(0);
      }
      expect(stats === null || Object.keys(stats).sort().join()).toBe(stats === null || 'idle,total,waiting');
    });

    it('refreshes the planner statistics after a bulk change without failing, saying nothing to the tables owner', async () => {
      await t.store.insertUserGroupIfAbsent(newGroup(t.fx.customer, 'bulk-1'), auditContext());
      // The suite runs as the tables' owner, who may analyse them: no warning comes back.
      expect(await t.store.refreshStatistics()).toEqual([]);
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'bulk-1')).toMatchObject({ providedId: 'bulk-1' });
    });

    it('refreshes stale statistics at start: sentences at most, and nothing stale is left for a second call', async () => {
      for (let n = 0; n < 60; n += 1)
        await t.store.insertUserGroupIfAbsent(newGroup(t.fx.customer, `stale-${n}`), auditContext());
      for (const warning of await t.store.refreshStaleStatistics()) expect(warning).toMatch(/^\S.{10,}$/s);
      expect(await t.store.refreshStaleStatistics()).toEqual([]);
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'stale-0')).toMatchObject({
        providedId: 'stale-0',
      });
    });

    it("reads the server's settings as warnings for the operator: sentences, the same each time", async () => {
      const warnings = await t.store.serverWarnings();
      for (const warning of warnings) expect(warning).toMatch(/^\S.{10,}$/s);
      expect(await t.store.serverWarnings()).toEqual(warnings);
    });

    it('refuses every call with unavailable once closed, and closes again without error', async () => {
      await t.store.close();
      await t.store.close();
      await expectAppError(t.store.ping(), 'unavailable');
      await expectAppError(t.store.findWorkspaceByName('acme'), 'unavailable');
      await expectAppError(t.store.listSigningKeys(t.fx.customer, T0), 'unavailable');
      await expectAppError(
        t.store.insertUserGroupIfAbsent(newGroup(t.fx.customer, 'late'), auditContext()),
        'unavailable',
      );
      await expectAppError(t.store.createWorkspace('late', auditContext()), 'unavailable');
    });
  });
}
