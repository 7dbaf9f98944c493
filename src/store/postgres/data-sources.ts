import { failure } from '../../domain/errors.js';
import type { AuditContext, DataSourcePatch, DataSourceRecord, NewDataSource } from '../../domain/models.js';
import type { Environment } from '../../domain/tenancy.js';
import { dataSourceCreated, planDataSourceDeletion, planDataSourceUpdate } from '../../domain/data-sources.rules.js';
import type { DataSourceStore } from '../store.js';
import type { AuditEvents } from './audit-events.js';
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
    createdAt: iso(row.created_at),
  };
}

const COLUMNS = 'id, workspace_id, environment, provided_id, name, schema_id, created_at';

const sql = statements({
  // As for schemas: a taken provided id inserts no row and so draws no id from the sequence.
  insert: `INSERT INTO data_sources (workspace_id, environment, provided_id, name, schema_id, created_at)
    SELECT @workspaceId, @environment, @providedId, @name, @schemaId, @createdAt
    WHERE NOT EXISTS (SELECT 1 FROM data_sources
      WHERE workspace_id = @workspaceId AND environment = @environment AND provided_id = @providedId)
    RETURNING ${COLUMNS}`,
  list: `SELECT ${COLUMNS} FROM data_sources
    WHERE workspace_id = @workspaceId AND (@environment::text IS NULL OR environment = @environment) ORDER BY id`,
  byId: `SELECT ${COLUMNS} FROM data_sources WHERE id = @id AND workspace_id = @workspaceId`,
  // FOR UPDATE conflicts with the FOR KEY SHARE lock a new mapping row's foreign key check takes on
  // the data source, so no group can start mapping to it until this transaction ends, and a mapping
  // written before the lock was granted has committed and is counted.
  lockById: `SELECT ${COLUMNS} FROM data_sources WHERE id = @id AND workspace_id = @workspaceId FOR UPDATE`,
  // Array parameters keep one statement for any number of references.
  byRefs: `SELECT ${COLUMNS} FROM data_sources
    WHERE workspace_id = @workspaceId AND environment = @environment
      AND (id = ANY(@ids::bigint[]) OR provided_id = ANY(@providedIds::text[]))
    ORDER BY id`,
  usedBy: 'SELECT count(DISTINCT team_id) AS used_by FROM user_group_mappings WHERE data_source_id = @id',
  update: 'UPDATE data_sources SET provided_id = @providedId, name = @name, schema_id = @schemaId WHERE id = @id',
  delete: 'DELETE FROM data_sources WHERE id = @id',
});

export function dataSourceMethods(db: PostgresDatabase, audit: AuditEvents): DataSourceStore {
  const many = async (q: Queryable, statement: Statement): Promise<DataSourceRecord[]> =>
    (await q.rows<DataSourceRow>(statement)).map(toDataSource);

  const lockedById = async (tx: Queryable, workspaceId: number, id: number): Promise<DataSourceRecord | null> =>
    (await many(tx, sql.lockById({ id, workspaceId })))[0] ?? null;

  const usedBy = async (tx: Queryable, id: number): Promise<number> => {
    const [row] = await tx.rows<{ used_by: Int8 }>(sql.usedBy({ id }));
    return toNumber(row?.used_by ?? 0);
  };

  const insert = audit.withAudit(async (tx, _context: AuditContext, source: NewDataSource) => {
    const { tenant, providedId, name, schemaId, createdAt } = source;
    const [row] = await tx.rows<DataSourceRow>(sql.insert({ ...tenant, providedId, name, schemaId, createdAt }));
    if (!row) throw failure.taken('data_source_provided_id');
    const record = toDataSource(row);
    return { result: record, entries: [dataSourceCreated(record)] };
  });

  const update = audit.withAudit(
    async (tx, _context: AuditContext, workspaceId: number, id: number, patch: DataSourcePatch) => {
      const current = await lockedById(tx, workspaceId, id);
      const plan = planDataSourceUpdate(current, patch, current ? await usedBy(tx, id) : 0);
      if (plan.write) await tx.rows(sql.update({ ...plan.write }));
      return plan;
    },
  );

  const remove = audit.withAudit(async (tx, _context: AuditContext, workspaceId: number, id: number) => {
    const current = await lockedById(tx, workspaceId, id);
    const plan = planDataSourceDeletion(current, current ? await usedBy(tx, id) : 0);
    if (plan.remove) await tx.rows(sql.delete({ id: plan.remove.id }));
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
