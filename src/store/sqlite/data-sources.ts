import type { Database } from 'better-sqlite3';
import type { AuditContext, DataSourcePatch, DataSourceRecord, NewDataSource } from '../../domain/models.js';
import { dataSourceCreated, planDataSourceDeletion, planDataSourceUpdate } from '../../domain/data-sources.rules.js';
import type { DataSourceStore } from '../store.js';
import type { AuditEvents } from './audit-events.js';
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
    byId: `SELECT ${COLUMNS} FROM data_sources WHERE id = ? AND workspace_id = ?`,
    // JSON array parameters keep one prepared statement for any number of references.
    byRefs: `SELECT ${COLUMNS} FROM data_sources
      WHERE workspace_id = @workspaceId AND environment = @environment
        AND (id IN (SELECT value FROM json_each(@ids)) OR provided_id IN (SELECT value FROM json_each(@providedIds)))
      ORDER BY id`,
    usedBy: 'SELECT count(DISTINCT team_id) AS usedBy FROM user_group_mappings WHERE data_source_id = ?',
    update: 'UPDATE data_sources SET provided_id = @providedId, name = @name, schema_id = @schemaId WHERE id = @id',
    delete: 'DELETE FROM data_sources WHERE id = ?',
  });

  const byId = (workspaceId: number, id: number): DataSourceRecord | null =>
    (sql.byId.get(id, workspaceId) as DataSourceRecord | undefined) ?? null;

  const usedBy = (id: number): number => (sql.usedBy.get(id) as { usedBy: number }).usedBy;

  const insert = audit.withAudit((_context: AuditContext, source: NewDataSource) => {
    const record = sql.insert.get({ ...source, ...source.tenant }) as DataSourceRecord;
    return { result: record, entries: [dataSourceCreated(record)] };
  });

  // The usage count is read under the write lock of the same immediate transaction, so no group can
  // start mapping to the data source between the check and the change.
  const update = audit.withAudit((_context: AuditContext, workspaceId: number, id: number, patch: DataSourcePatch) => {
    const current = byId(workspaceId, id);
    const plan = planDataSourceUpdate(current, patch, current ? usedBy(id) : 0);
    if (plan.write) sql.update.run(plan.write);
    return plan;
  });

  const remove = audit.withAudit((_context: AuditContext, workspaceId: number, id: number) => {
    const current = byId(workspaceId, id);
    const plan = planDataSourceDeletion(current, current ? usedBy(id) : 0);
    if (plan.remove) sql.delete.run(plan.remove.id);
    return plan;
  });

  return {
    insertDataSource: (source, context) => insert(context, source),
    listDataSources: (workspaceId, environment) =>
      sql.list.all({ workspaceId, environment: environment ?? null }) as DataSourceRecord[],
    findDataSourceById: byId,
    findDataSources: (tenant, refs) =>
      sql.byRefs.all({
        workspaceId: tenant.workspaceId,
        environment: tenant.environment,
        ids: JSON.stringify(refs.ids),
        providedIds: JSON.stringify(refs.providedIds),
      }) as DataSourceRecord[],
    updateDataSource: (workspaceId, id, patch, context) => update(context, workspaceId, id, patch),
    deleteDataSource: (workspaceId, id, context) => remove(context, workspaceId, id),
  };
}
