import type { Database } from 'better-sqlite3';
import type { AuditContext, DataSourceRecord, NewDataSource } from '../../domain/models.js';
import type { DataSourceStore } from '../store.js';
import type { AuditEvents } from './audit-events.js';
import { creationChanges } from './audit-events.js';
import type { Synchronous } from './guard.js';
import { preparedOnFirstUse } from './prepared.js';

const COLUMNS = `id, workspace_id AS workspaceId, environment, provided_id AS providedId, name,
  schema_id AS schemaId, created_at AS createdAt`;

export function dataSourceMethods(db: Database, audit: AuditEvents): Synchronous<DataSourceStore> {
  const sql = preparedOnFirstUse(db, {
    insert: `INSERT INTO data_sources (workspace_id, environment, provided_id, name, schema_id, created_at)
      VALUES (@workspaceId, @environment, @providedId, @name, @schemaId, @createdAt) RETURNING ${COLUMNS}`,
    list: `SELECT ${COLUMNS} FROM data_sources
      WHERE workspace_id = @workspaceId AND (@environment IS NULL OR environment = @environment) ORDER BY id`,
    // JSON array parameters keep one prepared statement for any number of references.
    byRefs: `SELECT ${COLUMNS} FROM data_sources
      WHERE workspace_id = @workspaceId AND environment = @environment
        AND (id IN (SELECT value FROM json_each(@ids)) OR provided_id IN (SELECT value FROM json_each(@providedIds)))
      ORDER BY id`,
  });

  const insert = audit.withAudit((context: AuditContext, source: NewDataSource) => {
    const { tenant } = source;
    const record = sql.insert.get({ ...source, ...tenant }) as DataSourceRecord;
    const entry = {
      action: 'data_source.created' as const,
      workspaceId: tenant.workspaceId,
      environment: tenant.environment,
      providedId: record.providedId,
      changes: creationChanges({
        id: record.id,
        provided_id: record.providedId,
        name: record.name,
        schema_id: record.schemaId,
      }),
    };
    return { result: record, entries: [entry] };
  });

  return {
    insertDataSource: (source, context) => insert(context, source),
    listDataSources: (workspaceId, environment) =>
      sql.list.all({ workspaceId, environment: environment ?? null }) as DataSourceRecord[],
    findDataSources: (tenant, refs) =>
      sql.byRefs.all({
        workspaceId: tenant.workspaceId,
        environment: tenant.environment,
        ids: JSON.stringify(refs.ids),
        providedIds: JSON.stringify(refs.providedIds),
      }) as DataSourceRecord[],
  };
}
