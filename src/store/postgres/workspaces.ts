import type { AuditContext } from '../../domain/audit/audit.records.js';
import type { Workspace } from '../../domain/workspaces/workspace.records.js';
import { workspaceCreated } from '../../domain/catalog.rules.js';
import type { WorkspaceStore } from '../../domain/workspaces/workspaces.port.js';
import type { AuditEvents } from './audit-events.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';
import { iso, onlyRow, toNumber } from './rows.js';
import type { Int8 } from './rows.js';
import { statements } from './statements.js';

interface WorkspaceRow {
  id: Int8;
  name: string;
  created_at: Date;
}

function toWorkspace(row: WorkspaceRow): Workspace {
  return { id: toNumber(row.id), name: row.name, createdAt: iso(row.created_at) };
}

const COLUMNS = 'id, name, created_at';

const sql = statements({
  insert: `INSERT INTO workspaces (name, created_at) VALUES (@name, @at) RETURNING ${COLUMNS}`,
  insertIfAbsent: `INSERT INTO workspaces (name, created_at) VALUES (@name, @at)
    ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}`,
  byName: `SELECT ${COLUMNS} FROM workspaces WHERE name = @name`,
  byId: `SELECT ${COLUMNS} FROM workspaces WHERE id = @id`,
  list: `SELECT ${COLUMNS} FROM workspaces ORDER BY id`,
});

export function workspaceMethods(db: PostgresDatabase, audit: AuditEvents): WorkspaceStore {
  const byName = async (q: Queryable, name: string): Promise<Workspace | null> => {
    const [row] = await q.rows<WorkspaceRow>(sql.byName({ name }));
    return row ? toWorkspace(row) : null;
  };

  const ensure = audit.withAudit(async (tx, context: AuditContext, name: string) => {
    const [inserted] = await tx.rows<WorkspaceRow>(sql.insertIfAbsent({ name, at: context.at }));
    if (inserted) {
      const workspace = toWorkspace(inserted);
      return { result: { workspace, created: true }, entries: [workspaceCreated(workspace)] };
    }
    // The conflicting insert has committed (ON CONFLICT waited for it), so this fresh snapshot sees it.
    const existing = await byName(tx, name);
    if (!existing) throw new Error(`workspace ${JSON.stringify(name)} conflicted on insert but cannot be found`);
    return { result: { workspace: existing, created: false }, entries: [] };
  });

  const create = audit.withAudit(async (tx, context: AuditContext, name: string) => {
    const workspace = toWorkspace(
      onlyRow(await tx.rows<WorkspaceRow>(sql.insert({ name, at: context.at })), 'workspace insert'),
    );
    return { result: workspace, entries: [workspaceCreated(workspace)] };
  });

  return {
    // Reading first keeps the common case (it exists) out of a write transaction, and spares an
    // identity value that a conflicting insert would use up.
    ensureWorkspace: async (name, context) => {
      const existing = await byName(db, name);
      return existing ? { workspace: existing, created: false } : ensure(context, name);
    },
    createWorkspace: (name, context) => create(context, name),
    findWorkspaceByName: (name) => byName(db, name),
    findWorkspaceById: async (id) => {
      const [row] = await db.rows<WorkspaceRow>(sql.byId({ id }));
      return row ? toWorkspace(row) : null;
    },
    listWorkspaces: async () => (await db.rows<WorkspaceRow>(sql.list())).map(toWorkspace),
  };
}
