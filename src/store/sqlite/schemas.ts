import type { Database } from 'better-sqlite3';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type { SchemaRecord } from '../../domain/schemas/schema.records.js';
import type { SchemaStore } from '../../domain/schemas/schemas.port.js';
import { issuedCatalogueNumber, schemaCreated } from '../../domain/catalog.rules.js';
import { HIGH_WATER_COLUMN } from '../catalogue-numbers.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './busy-retry.js';
import { preparedOnFirstUse } from './prepared.js';

// `number` is the schema's id in its workspace (migration 0010); the row id stays internal.
const COLUMNS = 'number AS id, workspace_id AS workspaceId, name, created_at AS createdAt';

/** Bumps (or, for a chosen number, raises) a workspace's high-water mark of one kind; returns the mark. */
export const issueNumberSql = (column: string) => `UPDATE workspaces SET
    ${column} = CASE WHEN @chosen IS NULL THEN ${column} + 1 ELSE max(${column}, @chosen) END
  WHERE id = @workspaceId RETURNING ${column} AS highWater`;

export function schemaMethods(db: Database, audit: AuditEvents): Synchronous<SchemaStore> {
  const sql = preparedOnFirstUse(db, {
    issue: issueNumberSql(HIGH_WATER_COLUMN.schemas),
    insert: `INSERT INTO schemas (workspace_id, number, name, created_at) VALUES (?, ?, ?, ?) RETURNING ${COLUMNS}`,
    list: `SELECT ${COLUMNS} FROM schemas WHERE workspace_id = ? ORDER BY number`,
    // A JSON array parameter keeps one prepared statement for any number of ids.
    byIds: `SELECT ${COLUMNS} FROM schemas
      WHERE workspace_id = ? AND number IN (SELECT value FROM json_each(?)) ORDER BY number`,
  });

  // A taken name or id fails the insert, which rolls the bump of the high-water mark back with it.
  const insert = audit.withAudit((context: AuditContext, workspaceId: number, name: string, id?: number) => {
    const { highWater } = sql.issue.get({ workspaceId, chosen: id ?? null }) as { highWater: number };
    const number = issuedCatalogueNumber(id, highWater, 'schema');
    const record = sql.insert.get(workspaceId, number, name, context.at) as SchemaRecord;
    return { result: record, entries: [schemaCreated(record)] };
  });

  return {
    insertSchema: (workspaceId, name, context, id) => insert(context, workspaceId, name, id),
    listSchemas: (workspaceId) => sql.list.all(workspaceId) as SchemaRecord[],
    findSchemasByIds: (workspaceId, ids) => sql.byIds.all(workspaceId, JSON.stringify(ids)) as SchemaRecord[],
  };
}
