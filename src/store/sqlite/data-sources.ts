import type { Database } from 'better-sqlite3';
import type { AuditContext, DataSourcePatch, DataSourceRecord, NewDataSource } from '../../domain/models.js';
import type { DataSourceChange, DataSourceStore } from '../store.js';
import { creationChanges, dataSourceAuditFields, dataSourceEntry, deletionChanges } from '../audit-entries.js';
import type { Audited } from '../audit-entries.js';
import { patchParameters } from '../user-group-records.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './guard.js';
import { preparedOnFirstUse } from './prepared.js';

const COLUMNS = `id, workspace_id AS workspaceId, environment, provided_id AS providedId, name,
  schema_id AS schemaId, created_at AS createdAt`;

const PATCHABLE = ['providedId', 'name', 'schemaId'] as const;

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
    update: `UPDATE data_sources SET
        provided_id = CASE WHEN @setProvidedId THEN @providedId ELSE provided_id END,
        name = CASE WHEN @setName THEN @name ELSE name END,
        schema_id = CASE WHEN @setSchemaId THEN @schemaId ELSE schema_id END
      WHERE id = @id RETURNING ${COLUMNS}`,
    delete: 'DELETE FROM data_sources WHERE id = ?',
  });

  const byId = (workspaceId: number, id: number): DataSourceRecord | null =>
    (sql.byId.get(id, workspaceId) as DataSourceRecord | undefined) ?? null;

  const usedBy = (id: number): number => (sql.usedBy.get(id) as { usedBy: number }).usedBy;

  const unchanged = (change: DataSourceChange): Audited<DataSourceChange> => ({ result: change, entries: [] });

  const insert = audit.withAudit((_context: AuditContext, source: NewDataSource) => {
    const { tenant } = source;
    const record = sql.insert.get({ ...source, ...tenant }) as DataSourceRecord;
    return { result: record, entries: [dataSourceEntry('data_source.created', record, creationChanges(dataSourceAuditFields(record)))] };
  });

  // The usage count is read under the write lock of the same immediate transaction, so no group can
  // start mapping to the data source between the check and the change.
  const update = audit.withAudit((context: AuditContext, workspaceId: number, id: number, patch: DataSourcePatch): Audited<DataSourceChange> => {
    const current = byId(workspaceId, id);
    if (!current) return unchanged({ status: 'not_found' });
    if (patch.schemaId !== undefined && patch.schemaId !== current.schemaId) {
      const count = usedBy(id);
      if (count > 0) return unchanged({ status: 'in_use', usedBy: count });
    }
    const record = sql.update.get({ id, ...patchParameters(PATCHABLE, patch) }) as DataSourceRecord;
    const entry = dataSourceEntry('data_source.updated', record, context.changes ?? null);
    return { result: { status: 'changed', dataSource: record }, entries: [entry] };
  });

  const remove = audit.withAudit((_context: AuditContext, workspaceId: number, id: number): Audited<DataSourceChange> => {
    const current = byId(workspaceId, id);
    if (!current) return unchanged({ status: 'not_found' });
    const count = usedBy(id);
    if (count > 0) return unchanged({ status: 'in_use', usedBy: count });
    sql.delete.run(id);
    const entry = dataSourceEntry('data_source.deleted', current, deletionChanges(dataSourceAuditFields(current)));
    return { result: { status: 'changed', dataSource: current }, entries: [entry] };
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
