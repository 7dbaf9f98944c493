import { describe, expect, it } from 'vitest';
import { auditContext, expectAppError, T1 } from '../store-fixtures.js';
import type { ContractContext } from './context.js';

export function describeWorkspaceContract(t: ContractContext): void {
  describe('workspaces', () => {
    it('ensureWorkspace creates once, then returns the same workspace with created: false', async () => {
      const first = await t.store.ensureWorkspace('initech', auditContext({ at: T1 }));
      expect(first.created).toBe(true);
      expect(first.workspace).toEqual({ id: expect.any(Number), name: 'initech', createdAt: T1 });
      const second = await t.store.ensureWorkspace('initech', auditContext());
      expect(second).toEqual({ workspace: first.workspace, created: false });
    });

    it('createWorkspace creates, and refuses a name in use with workspace_name_taken', async () => {
      const created = await t.store.createWorkspace('initech', auditContext({ at: T1 }));
      expect(created).toMatchObject({ name: 'initech', createdAt: T1 });
      await expectAppError(t.store.createWorkspace('initech', auditContext()), 'workspace_name_taken', 'name');
      await expectAppError(t.store.createWorkspace('acme', auditContext()), 'workspace_name_taken', 'name');
    });

    it('finds workspaces by name and id, and lists them in id order', async () => {
      const { workspace, otherWorkspace } = t.fx;
      expect(await t.store.findWorkspaceByName('acme')).toEqual(workspace);
      expect(await t.store.findWorkspaceById(otherWorkspace.id)).toEqual(otherWorkspace);
      expect(await t.store.findWorkspaceByName('nope')).toBeNull();
      expect(await t.store.findWorkspaceById(otherWorkspace.id + 1000)).toBeNull();
      expect(await t.store.listWorkspaces()).toEqual([workspace, otherWorkspace]);
    });

    it('answers ping and tolerates a second migrate', async () => {
      await expect(t.store.ping()).resolves.toBeUndefined();
      await t.store.migrate();
      expect(await t.store.findWorkspaceByName('acme')).toEqual(t.fx.workspace);
    });
  });
}
