import { failure } from '../../domain/errors.js';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type { SchemaRecord } from '../../domain/schemas/schema.records.js';
import { issuedCatalogueNumber, schemaCreated } from '../../domain/catalog.rules.js';
import { HIGH_WATER_COLUMN } from '../catalogue-numbers.js';
import type { SchemaStore } from '../../domain/schemas/schemas.port.js';
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

// `number` is the schema's id in its workspace (migration 0010); the row id stays internal.
const COLUMNS = 'number AS id, workspace_id, name, created_at';

/**
 * Bumps (or, for a chosen number, raises) a workspace's high-water mark of one kind; returns the mark.
 * The row lock it takes serialises the numbering of the workspace's creates of that kind.
 */
export const issueNumberSql = (column: string) => `UPDATE workspaces SET
    ${column} = CASE WHEN @chosen::bigint IS NULL THEN ${column} + 1 ELSE greatest(${column}, @chosen::bigint) END
  WHERE id = @workspaceId RETURNING ${column} AS high_water`;

const sql = statements({
  issue: issueNumberSql(HIGH_WATER_COLUMN.schemas),
  // INSERT … SELECT … WHERE NOT EXISTS rather than VALUES: a taken name produces no row, and the
  // transaction (with its bump of the high-water mark) rolls back; the unique constraint still
  // settles a true race.
  insert: `INSERT INTO schemas (workspace_id, number, name, created_at)
    SELECT @workspaceId, @number, @name, @at
    WHERE NOT EXISTS (SELECT 1 FROM schemas WHERE workspace_id = @workspaceId AND name = @name)
    RETURNING ${COLUMNS}`,
  // A chosen number that is taken is refused before the insert draws a row id from the sequence.
  numberTaken: 'SELECT 1 FROM schemas WHERE workspace_id = @workspaceId AND number = @number',
  list: `SELECT ${COLUMNS} FROM schemas WHERE workspace_id = @workspaceId ORDER BY number`,
  // An array parameter keeps one statement for any number of ids.
  byIds: `SELECT ${COLUMNS} FROM schemas WHERE workspace_id = @workspaceId AND number = ANY(@ids::bigint[]) ORDER BY number`,
});

export function schemaMethods(db: PostgresDatabase, audit: AuditEvents): SchemaStore {
  const insert = audit.withAudit(async (tx, context: AuditContext, workspaceId: number, name: string, id?: number) => {
    const [mark] = await tx.rows<{ high_water: Int8 }>(sql.issue({ workspaceId, chosen: id ?? null }));
    const number = issuedCatalogueNumber(id, toNumber(mark!.high_water), 'schema');
    if ((await tx.rows(sql.numberTaken({ workspaceId, number }))).length > 0) throw failure.taken('schema_number');
    const [row] = await tx.rows<SchemaRow>(sql.insert({ workspaceId, number, name, at: context.at }));
    if (!row) throw failure.taken('schema_name');
    const schema = toSchema(row);
    return { result: schema, entries: [schemaCreated(schema)] };
  });

  return {
    insertSchema: (workspaceId, name, context, id) => insert(context, workspaceId, name, id),
    listSchemas: async (workspaceId) => (await db.rows<SchemaRow>(sql.list({ workspaceId }))).map(toSchema),
    findSchemasByIds: async (workspaceId, ids) =>
      (await db.rows<SchemaRow>(sql.byIds({ workspaceId, ids }))).map(toSchema),
  };
}
