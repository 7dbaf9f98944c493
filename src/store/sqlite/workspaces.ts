import type { Database } from 'better-sqlite3';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type { Workspace } from '../../domain/workspaces/workspace.records.js';
import type { WorkspaceStore } from '../../domain/workspaces/workspaces.port.js';
import { workspaceCreated } from '../../domain/catalog.rules.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './busy-retry.js';
import { preparedOnFirstUse } from './prepared.js';

const COLUMNS = 'id, name, created_at AS createdAt';

export function workspaceMethods(db: Database, audit: AuditEvents): Synchronous<WorkspaceStore> {
  const sql = preparedOnFirstUse(db, {
    insert: `INSERT INTO workspaces (name, created_at) VALUES (?, ?) RETURNING ${COLUMNS}`,
    insertIfAbsent: `INSERT INTO workspaces (name, created_at) VALUES (?, ?)
      ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}`,
    byName: `SELECT ${COLUMNS} FROM workspaces WHERE name = ?`,
    byId: `SELECT ${COLUMNS} FROM workspaces WHERE id = ?`,
    list: `SELECT ${COLUMNS} FROM workspaces ORDER BY id`,
  });

  const ensure = audit.withAudit((context: AuditContext, name: string) => {
    const inserted = sql.insertIfAbsent.get(name, context.at) as Workspace | undefined;
    if (inserted) return { result: { workspace: inserted, created: true }, entries: [workspaceCreated(inserted)] };
    const existing = sql.byName.get(name) as Workspace;
    return { result: { workspace: existing, created: false }, entries: [] };
  });

  const create = audit.withAudit((context: AuditContext, name: string) => {
    const workspace = sql.insert.get(name, context.at) as Workspace;
    return { result: workspace, entries: [workspaceCreated(workspace)] };
  });

  return {
    // Reading first keeps the common case (it exists) out of a write transaction, and spares an
    // AUTOINCREMENT value that a conflicting insert would use up.
    ensureWorkspace: (name, context) => {
      const existing = sql.byName.get(name) as Workspace | undefined;
      return existing ? { workspace: existing, created: false } : ensure(context, name);
    },
    createWorkspace: (name, context) => create(context, name),
    findWorkspaceByName: (name) => (sql.byName.get(name) as Workspace | undefined) ?? null,
    findWorkspaceById: (id) => (sql.byId.get(id) as Workspace | undefined) ?? null,
    listWorkspaces: () => sql.list.all() as Workspace[],
  };
}
