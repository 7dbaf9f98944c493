import type { AuditContext, SchemaRecord } from '../../domain/models.js';
import { schemaCreatedEntry } from '../audit-entries.js';
import type { SchemaStore } from '../store.js';
import type { AuditEvents } from './audit-events.js';
import type { PostgresDatabase } from './postgres-database.js';
import { iso, onlyRow, toNumber } from './rows.js';
import type { Int8 } from './rows.js';
import { statements } from './statements.js';

interface SchemaRow {
  id: Int8;
  workspace_id: Int8;
  name: string;
  created_at: Date;
}

function toSchema(row: SchemaRow): SchemaRecord {
  return { id: toNumber(row.id), workspaceId: toNumber(row.workspace_id), name: row.name, createdAt: iso(row.created_at) };
}

const COLUMNS = 'id, workspace_id, name, created_at';

const sql = statements({
  insert: `INSERT INTO schemas (workspace_id, name, created_at) VALUES (@workspaceId, @name, @at) RETURNING ${COLUMNS}`,
  list: `SELECT ${COLUMNS} FROM schemas WHERE workspace_id = @workspaceId ORDER BY id`,
  // An array parameter keeps one statement for any number of ids.
  byIds: `SELECT ${COLUMNS} FROM schemas WHERE workspace_id = @workspaceId AND id = ANY(@ids::bigint[]) ORDER BY id`,
});

export function schemaMethods(db: PostgresDatabase, audit: AuditEvents): SchemaStore {
  const insert = audit.withAudit(async (tx, context: AuditContext, workspaceId: number, name: string) => {
    const schema = toSchema(onlyRow(await tx.rows<SchemaRow>(sql.insert({ workspaceId, name, at: context.at })), 'schema insert'));
    return { result: schema, entries: [schemaCreatedEntry(schema)] };
  });

  return {
    insertSchema: (workspaceId, name, context) => insert(context, workspaceId, name),
    listSchemas: async (workspaceId) => (await db.rows<SchemaRow>(sql.list({ workspaceId }))).map(toSchema),
    findSchemasByIds: async (workspaceId, ids) => (await db.rows<SchemaRow>(sql.byIds({ workspaceId, ids }))).map(toSchema),
  };
}
