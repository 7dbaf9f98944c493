import { auditContextOf } from '../audit/audit-context.js';
import { failure } from '../errors.js';
import type { Clock } from '../clock.js';
import type { Workspace } from './workspace.records.js';
import { DEFAULT_WORKSPACE, type Actor } from '../tenancy.js';
import type { WorkspaceStore } from './workspaces.port.js';

export type WorkspaceService = ReturnType<typeof createWorkspaceService>;

export function createWorkspaceService({ store, clock }: { store: WorkspaceStore; clock: Clock }) {
  return {
    /** Every command that opens a database calls this, so an empty database is usable at once. */
    async ensureDefaultWorkspace(actor: Actor): Promise<Workspace> {
      const { workspace } = await store.ensureWorkspace(
        DEFAULT_WORKSPACE,
        auditContextOf(clock, { actor, requestId: null }),
      );
      return workspace;
    },

    async createWorkspace(name: string, actor: Actor): Promise<Workspace> {
      return store.createWorkspace(name, auditContextOf(clock, { actor, requestId: null }));
    },

    async listWorkspaces(): Promise<Workspace[]> {
      return store.listWorkspaces();
    },

    async requireWorkspace(name: string): Promise<Workspace> {
      const workspace = await store.findWorkspaceByName(name);
      if (!workspace) throw failure.workspaceNotFound(name);
      return workspace;
    },
  };
}
