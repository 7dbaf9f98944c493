import type { AuditContext } from '../audit/audit.records.js';
import type { Workspace } from './workspace.records.js';

export interface WorkspaceStore {
  /** Returns the workspace named `name`, creating it (with an audit event) when absent. */
  ensureWorkspace(name: string, audit: AuditContext): Promise<{ workspace: Workspace; created: boolean }>;
  /** Throws `workspace_name_taken` when the name exists. */
  createWorkspace(name: string, audit: AuditContext): Promise<Workspace>;
  findWorkspaceByName(name: string): Promise<Workspace | null>;
  findWorkspaceById(id: number): Promise<Workspace | null>;
  listWorkspaces(): Promise<Workspace[]>;
}
