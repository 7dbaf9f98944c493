import { failure } from '../../domain/errors.js';
import type { AuditContext, SchemaRecord } from '../../domain/models.js';
import { schemaCreated } from '../../domain/catalog.rules.js';
import type { SchemaStore } from '../store.js';
import type { AuditEvents } from './audit-events.js';
import type { PostgresDatabase } from './postgres-database.js';
import { iso, toNumber } from './rows.js';
import type { Int8 } from './rows.js';
import { statements } from './statements.js';

interface SchemaRow {
  id: Int8;
  workspace_id: Int8;
  name: string;
  created_at: Date;
}

function toSchema(row: SchemaRow): SchemaRecord {
  return {
    id: toNumber(row.id),
    workspaceId: toNumber(row.workspace_id),
    name: row.name,
    createdAt: iso(row.created_at),
  };
}

const COLUMNS = 'id, workspace_id, name, created_at';

const sql = statements({
  // INSERT … SELECT … WHERE NOT EXISTS rather than VALUES: a taken name produces no row, so no id is
  // drawn from the sequence (a rejected request changes nothing); the unique constraint still
  // settles a true race.
  insert: `INSERT INTO schemas (workspace_id, name, created_at)
    SELECT @workspaceId, @name, @at
    WHERE NOT EXISTS (SELECT 1 FROM schemas WHERE workspace_id = @workspaceId AND name = @name)
    RETURNING ${COLUMNS}`,
  list: `SELECT ${COLUMNS} FROM schemas WHERE workspace_id = @workspaceId ORDER BY id`,
  // An array parameter keeps one statement for any number of ids.
  byIds: `SELECT ${COLUMNS} FROM schemas WHERE workspace_id = @workspaceId AND id = ANY(@ids::bigint[]) ORDER BY id`,
});

export function schemaMethods(db: PostgresDatabase, audit: AuditEvents): SchemaStore {
  const insert = audit.withAudit(async (tx, context: AuditContext, workspaceId: number, name: string) => {
    const [row] = await tx.rows<SchemaRow>(sql.insert({ workspaceId, name, at: context.at }));
    if (!row) throw failure.taken('schema_name');
    const schema = toSchema(row);
    return { result: schema, entries: [schemaCreated(schema)] };
  });

  return {
    insertSchema: (workspaceId, name, context) => insert(context, workspaceId, name),
    listSchemas: async (workspaceId) => (await db.rows<SchemaRow>(sql.list({ workspaceId }))).map(toSchema),
    findSchemasByIds: async (workspaceId, ids) =>
      (await db.rows<SchemaRow>(sql.byIds({ workspaceId, ids }))).map(toSchema),
  };
}
