import { failure } from '../../domain/errors.js';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type {
  DataSourcePatch,
  DataSourceRecord,
  NewDataSource,
} from '../../domain/data-sources/data-source.records.js';
import type { Environment } from '../../domain/tenancy.js';
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
import type { PostgresDatabase, Queryable } from './postgres-database.js';
import { iso, toNumber } from './rows.js';
import type { Int8 } from './rows.js';
import { statements } from './statements.js';
import type { Statement } from './statements.js';

interface DataSourceRow {
  id: Int8;
  workspace_id: Int8;
  environment: Environment;
  provided_id: string;
  name: string;
  schema_id: Int8;
  shared: boolean;
  created_at: Date;
}

function toDataSource(row: DataSourceRow): DataSourceRecord {
  return {
    id: toNumber(row.id),
    workspaceId: toNumber(row.workspace_id),
    environment: row.environment,
    providedId: row.provided_id,
    name: row.name,
    schemaId: toNumber(row.schema_id),
    shared: row.shared,
    createdAt: iso(row.created_at),
  };
}

// Ids are the numbers of the data source and its schema in the workspace (migration 0010).
const COLUMNS =
  'd.number AS id, d.workspace_id, d.environment, d.provided_id, d.name, s.number AS schema_id, d.shared, d.created_at';

const sql = statements({
  issue: issueNumberSql(HIGH_WATER_COLUMN.data_sources),
  // As for schemas: a taken provided id inserts no row, and the transaction rolls back.
  insert: `INSERT INTO data_sources (workspace_id, number, environment, provided_id, name, schema_id, shared, created_at)
    SELECT @workspaceId, @number, @environment, @providedId, @name, ${schemaRowId('@workspaceId', '@schemaId::bigint')},
      @shared::boolean, @createdAt
    WHERE NOT EXISTS (SELECT 1 FROM data_sources
      WHERE workspace_id = @workspaceId AND environment = @environment AND provided_id = @providedId)
    RETURNING number`,
  // A chosen number that is taken is refused before the insert draws a row id from the sequence.
  numberTaken: 'SELECT 1 FROM data_sources WHERE workspace_id = @workspaceId AND number = @number',
  list: `SELECT ${COLUMNS} FROM ${DATA_SOURCES_WITH_SCHEMA}
    WHERE d.workspace_id = @workspaceId AND (@environment::text IS NULL OR d.environment = @environment OR d.shared)
    ORDER BY d.number`,
  byId: `SELECT ${COLUMNS} FROM ${DATA_SOURCES_WITH_SCHEMA} WHERE d.number = @id AND d.workspace_id = @workspaceId`,
  // FOR UPDATE conflicts with the FOR KEY SHARE lock a new mapping row's foreign key check takes on
  // the data source, so no group can start mapping to it until this transaction ends, and a mapping
  // written before the lock was granted has committed and is counted.
  lockById: `SELECT ${COLUMNS} FROM ${DATA_SOURCES_WITH_SCHEMA}
    WHERE d.number = @id AND d.workspace_id = @workspaceId FOR UPDATE OF d`,
  // Array parameters keep one statement for any number of references.
  byRefs: `SELECT ${COLUMNS} FROM ${DATA_SOURCES_WITH_SCHEMA}
    WHERE d.workspace_id = @workspaceId AND (d.environment = @environment OR d.shared)
      AND (d.number = ANY(@ids::bigint[]) OR d.provided_id = ANY(@providedIds::text[]))
    ORDER BY d.environment <> @environment, d.number`,
  usedBy: `SELECT count(DISTINCT m.team_id) AS used_by FROM user_group_mappings m
    JOIN data_sources d ON d.id = m.data_source_id WHERE d.workspace_id = @workspaceId AND d.number = @id`,
  update: `UPDATE data_sources SET provided_id = @providedId, name = @name,
      schema_id = ${schemaRowId('@workspaceId', '@schemaId::bigint')}
    WHERE workspace_id = @workspaceId AND number = @id`,
  delete: 'DELETE FROM data_sources WHERE workspace_id = @workspaceId AND number = @id',
});

export function dataSourceMethods(db: PostgresDatabase, audit: AuditEvents): DataSourceStore {
  const many = async (q: Queryable, statement: Statement): Promise<DataSourceRecord[]> =>
    (await q.rows<DataSourceRow>(statement)).map(toDataSource);

  const lockedById = async (tx: Queryable, workspaceId: number, id: number): Promise<DataSourceRecord | null> =>
    (await many(tx, sql.lockById({ id, workspaceId })))[0] ?? null;

  const usedBy = async (tx: Queryable, workspaceId: number, id: number): Promise<number> => {
    const [row] = await tx.rows<{ used_by: Int8 }>(sql.usedBy({ workspaceId, id }));
    return toNumber(row?.used_by ?? 0);
  };

  const insert = audit.withAudit(async (tx, _context: AuditContext, source: NewDataSource) => {
    const { tenant, providedId, name, schemaId, createdAt } = source;
    const [mark] = await tx.rows<{ high_water: Int8 }>(
      sql.issue({ workspaceId: tenant.workspaceId, chosen: source.id ?? null }),
    );
    const number = issuedCatalogueNumber(source.id, toNumber(mark!.high_water), 'data source');
    if ((await tx.rows(sql.numberTaken({ workspaceId: tenant.workspaceId, number }))).length > 0)
      throw failure.taken('data_source_number');
    const [row] = await tx.rows<{ number: Int8 }>(
      sql.insert({ ...tenant, number, providedId, name, schemaId, shared: source.shared === true, createdAt }),
    );
    if (!row) throw failure.taken('data_source_provided_id');
    const record = (await many(tx, sql.byId({ id: number, workspaceId: tenant.workspaceId })))[0]!;
    return { result: record, entries: [dataSourceCreated(record)] };
  });

  const update = audit.withAudit(
    async (tx, _context: AuditContext, workspaceId: number, id: number, patch: DataSourcePatch) => {
      const current = await lockedById(tx, workspaceId, id);
      const plan = planDataSourceUpdate(current, patch, current ? await usedBy(tx, workspaceId, id) : 0);
      if (plan.write) await tx.rows(sql.update({ ...plan.write }));
      return plan;
    },
  );

  const remove = audit.withAudit(async (tx, _context: AuditContext, workspaceId: number, id: number) => {
    const current = await lockedById(tx, workspaceId, id);
    const plan = planDataSourceDeletion(current, current ? await usedBy(tx, workspaceId, id) : 0);
    if (plan.remove) await tx.rows(sql.delete({ workspaceId, id: plan.remove.id }));
    return plan;
  });

  return {
    insertDataSource: (source, context) => insert(context, source),
    listDataSources: (workspaceId, environment) =>
      many(db, sql.list({ workspaceId, environment: environment ?? null })),
    findDataSourceById: async (workspaceId, id) => (await many(db, sql.byId({ id, workspaceId })))[0] ?? null,
    findDataSources: (tenant, refs) =>
      many(db, sql.byRefs({ ...tenant, ids: refs.ids, providedIds: refs.providedIds })),
    updateDataSource: (workspaceId, id, patch, context) => update(context, workspaceId, id, patch),
    deleteDataSource: (workspaceId, id, context) => remove(context, workspaceId, id),
  };
}
