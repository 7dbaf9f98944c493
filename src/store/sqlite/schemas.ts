import type { Database } from 'better-sqlite3';
import type { AuditContext, SchemaRecord } from '../../domain/models.js';
import type { SchemaStore } from '../store.js';
import { schemaCreated } from '../../domain/catalog.rules.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './guard.js';
import { preparedOnFirstUse } from './prepared.js';

const COLUMNS = 'id, workspace_id AS workspaceId, name, created_at AS createdAt';

export function schemaMethods(db: Database, audit: AuditEvents): Synchronous<SchemaStore> {
  const sql = preparedOnFirstUse(db, {
    insert: `INSERT INTO schemas (workspace_id, name, created_at) VALUES (?, ?, ?) RETURNING ${COLUMNS}`,
    list: `SELECT ${COLUMNS} FROM schemas WHERE workspace_id = ? ORDER BY id`,
    // A JSON array parameter keeps one prepared statement for any number of ids.
    byIds: `SELECT ${COLUMNS} FROM schemas
      WHERE workspace_id = ? AND id IN (SELECT value FROM json_each(?)) ORDER BY id`,
  });

  const insert = audit.withAudit((context: AuditContext, workspaceId: number, name: string) => {
    const schema = sql.insert.get(workspaceId, name, context.at) as SchemaRecord;
    return { result: schema, entries: [schemaCreated(schema)] };
  });

  return {
    insertSchema: (workspaceId, name, context) => insert(context, workspaceId, name),
    listSchemas: (workspaceId) => sql.list.all(workspaceId) as SchemaRecord[],
    findSchemasByIds: (workspaceId, ids) => sql.byIds.all(workspaceId, JSON.stringify(ids)) as SchemaRecord[],
  };
}
