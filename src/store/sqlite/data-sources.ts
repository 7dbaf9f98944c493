import type { Database } from 'better-sqlite3';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type {
  DataSourcePatch,
  DataSourceRecord,
  NewDataSource,
} from '../../domain/data-sources/data-source.records.js';
import {
  dataSourceCreated,
  planDataSourceDeletion,
  planDataSourceUpdate,
} from '../../domain/data-sources/data-sources.rules.js';
import type { DataSourceStore } from '../../domain/data-sources/data-sources.port.js';
import { issuedCatalogueNumber } from '../../domain/catalog.rules.js';
import { DATA_SOURCES_WITH_SCHEMA, HIGH_WATER_COLUMN, schemaRowId } from '../catalogue-numbers.js';
import type { AuditEvents } from './audit-events.js';
import { issueNumberSql } from './schemas.js';
import type { Synchronous } from './busy-retry.js';
import { preparedOnFirstUse } from './prepared.js';

// Ids are the numbers of the data source and its schema in the workspace (migration 0010).
const COLUMNS = `d.number AS id, d.workspace_id AS workspaceId, d.environment, d.provided_id AS providedId, d.name,
  s.number AS schemaId, d.shared, d.created_at AS createdAt`;

/** SQLite has no boolean: `shared` comes back 0 or 1. */
type SqliteDataSourceRow = Omit<DataSourceRecord, 'shared'> & { shared: number };
const decode = (row: SqliteDataSourceRow): DataSourceRecord => ({ ...row, shared: row.shared === 1 });

export function dataSourceMethods(db: Database, audit: AuditEvents): Synchronous<DataSourceStore> {
  const sql = preparedOnFirstUse(db, {
    issue: issueNumberSql(HIGH_WATER_COLUMN.data_sources),
    insert: `INSERT INTO data_sources (workspace_id, number, environment, provided_id, name, schema_id, shared, created_at)
      VALUES (@workspaceId, @number, @environment, @providedId, @name, ${schemaRowId('@workspaceId', '@schemaId')},
        @shared, @createdAt)`,
    list: `SELECT ${COLUMNS} FROM ${DATA_SOURCES_WITH_SCHEMA}
      WHERE d.workspace_id = @workspaceId AND (@environment IS NULL OR d.environment = @environment OR d.shared = 1)
      ORDER BY d.number`,
    byId: `SELECT ${COLUMNS} FROM ${DATA_SOURCES_WITH_SCHEMA} WHERE d.number = ? AND d.workspace_id = ?`,
    // JSON array parameters keep one prepared statement for any number of references.
    byRefs: `SELECT ${COLUMNS} FROM ${DATA_SOURCES_WITH_SCHEMA}
      WHERE d.workspace_id = @workspaceId AND (d.environment = @environment OR d.shared = 1)
        AND (d.number IN (SELECT value FROM json_each(@ids)) OR d.provided_id IN (SELECT value FROM json_each(@providedIds)))
      ORDER BY d.environment <> @environment, d.number`,
    usedBy: `SELECT count(DISTINCT m.team_id) AS usedBy FROM user_group_mappings m
      JOIN data_sources d ON d.id = m.data_source_id WHERE d.workspace_id = ? AND d.number = ?`,
    update: `UPDATE data_sources SET provided_id = @providedId, name = @name,
        schema_id = ${schemaRowId('@workspaceId', '@schemaId')}
      WHERE workspace_id = @workspaceId AND number = @id`,
    delete: 'DELETE FROM data_sources WHERE workspace_id = ? AND number = ?',
  });

  const byId = (workspaceId: number, id: number): DataSourceRecord | null => {
    const row = sql.byId.get(id, workspaceId) as SqliteDataSourceRow | undefined;
    return row ? decode(row) : null;
  };

  const usedBy = (workspaceId: number, id: number): number =>
    (sql.usedBy.get(workspaceId, id) as { usedBy: number }).usedBy;

  // A taken provided id or number fails the insert, which rolls the bump of the high-water mark back.
  const insert = audit.withAudit((_context: AuditContext, source: NewDataSource) => {
    const { workspaceId } = source.tenant;
    const { highWater } = sql.issue.get({ workspaceId, chosen: source.id ?? null }) as { highWater: number };
    const number = issuedCatalogueNumber(source.id, highWater, 'data source');
    sql.insert.run({ ...source, ...source.tenant, number, shared: source.shared ? 1 : 0 });
    const record = byId(workspaceId, number)!;
    return { result: record, entries: [dataSourceCreated(record)] };
  });

  // The usage count is read under the write lock of the same immediate transaction, so no group can
  // start mapping to the data source between the check and the change.
  const update = audit.withAudit((_context: AuditContext, workspaceId: number, id: number, patch: DataSourcePatch) => {
    const current = byId(workspaceId, id);
    const plan = planDataSourceUpdate(current, patch, current ? usedBy(workspaceId, id) : 0);
    if (plan.write) sql.update.run(plan.write);
    return plan;
  });

  const remove = audit.withAudit((_context: AuditContext, workspaceId: number, id: number) => {
    const current = byId(workspaceId, id);
    const plan = planDataSourceDeletion(current, current ? usedBy(workspaceId, id) : 0);
    if (plan.remove) sql.delete.run(workspaceId, plan.remove.id);
    return plan;
  });

  return {
    insertDataSource: (source, context) => insert(context, source),
    listDataSources: (workspaceId, environment) =>
      (sql.list.all({ workspaceId, environment: environment ?? null }) as SqliteDataSourceRow[]).map(decode),
    findDataSourceById: byId,
    findDataSources: (tenant, refs) =>
      (
        sql.byRefs.all({
          workspaceId: tenant.workspaceId,
          environment: tenant.environment,
          ids: JSON.stringify(refs.ids),
          providedIds: JSON.stringify(refs.providedIds),
        }) as SqliteDataSourceRow[]
      ).map(decode),
    updateDataSource: (workspaceId, id, patch, context) => update(context, workspaceId, id, patch),
    deleteDataSource: (workspaceId, id, context) => remove(context, workspaceId, id),
  };
}
