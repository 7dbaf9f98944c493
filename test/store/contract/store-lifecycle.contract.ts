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
