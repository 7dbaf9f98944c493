import { auditContextOf } from '../audit/audit-context.js';
import { assertCatalogueId } from '../catalog.rules.js';
import { failure } from '../errors.js';
import type { Clock } from '../clock.js';
import type { DataSourcePatch, DataSourceRecord } from './data-source.records.js';
import { requireScope } from '../api-tokens/scopes.js';
import type { Caller, Environment } from '../tenancy.js';
import type { DataSourceChange } from './data-sources.rules.js';
import type { SchemaStore } from '../schemas/schemas.port.js';
import type { DataSourceStore } from './data-sources.port.js';

export interface NewDataSourceInput {
  providedId: string;
  name: string;
  schemaId: number;
  /** Chooses the data source's number in the workspace; else the workspace's next. */
  id?: number;
  /** Defaults to the caller's environment. */
  environment?: Environment;
  /** Mappable from every environment of the workspace (set at creation only). */
  shared?: boolean;
}

export type DataSourceService = ReturnType<typeof createDataSourceService>;

export function createDataSourceService({
  store,
  clock,
}: {
  store: DataSourceStore & Pick<SchemaStore, 'findSchemasByIds'>;
  clock: Clock;
}) {
  async function requireSchema(caller: Caller, schemaId: number): Promise<void> {
    const [schema] = await store.findSchemasByIds(caller.tenant.workspaceId, [schemaId]);
    if (!schema) throw failure.unknownSchema(schemaId, 'schema_id');
  }

  /** By id within the caller's environment, like every other admin lookup (ids are unique per workspace). */
  async function requireDataSource(caller: Caller, id: number): Promise<DataSourceRecord> {
    const dataSource = await store.findDataSourceById(caller.tenant.workspaceId, id);
    if (!dataSource || dataSource.environment !== caller.tenant.environment) throw notFound(id);
    return dataSource;
  }

  return {
    async createDataSource(caller: Caller, input: NewDataSourceInput): Promise<DataSourceRecord> {
      requireScope(caller, 'admin');
      assertCatalogueId(input.id);
      await requireSchema(caller, input.schemaId);
      const environment = input.environment ?? caller.tenant.environment;
      return store.insertDataSource(
        {
          tenant: { workspaceId: caller.tenant.workspaceId, environment },
          ...(input.id !== undefined ? { id: input.id } : {}),
          providedId: input.providedId,
          name: input.name,
          schemaId: input.schemaId,
          ...(input.shared ? { shared: true } : {}),
          createdAt: clock(),
        },
        auditContextOf(clock, caller),
      );
    },

    /** The data sources one environment may map (the given one, else the caller's): its own and the shared ones. */
    async listDataSources(caller: Caller, environment?: Environment): Promise<DataSourceRecord[]> {
      requireScope(caller, 'admin');
      return store.listDataSources(caller.tenant.workspaceId, environment ?? caller.tenant.environment);
    },

    /** Where a data source lives, for callers (the CLI) that name it by its workspace-unique id alone. */
    async environmentOfDataSource(caller: Caller, id: number): Promise<Environment> {
      requireScope(caller, 'admin');
      const dataSource = await store.findDataSourceById(caller.tenant.workspaceId, id);
      if (!dataSource) throw notFound(id);
      return dataSource.environment;
    },

    async getDataSource(caller: Caller, id: number): Promise<DataSourceRecord> {
      requireScope(caller, 'admin');
      return requireDataSource(caller, id);
    },

    /** Renames or re-ids it freely; moving it to another schema is refused while groups map to it. */
    async updateDataSource(caller: Caller, id: number, patch: DataSourcePatch): Promise<DataSourceRecord> {
      requireScope(caller, 'admin');
      const existing = await requireDataSource(caller, id);
      if (patch.schemaId !== undefined && patch.schemaId !== existing.schemaId)
        await requireSchema(caller, patch.schemaId);
      return outcome(
        id,
        await store.updateDataSource(caller.tenant.workspaceId, id, patch, auditContextOf(clock, caller)),
        'its schema cannot change',
      );
    },

    async deleteDataSource(caller: Caller, id: number): Promise<DataSourceRecord> {
      requireScope(caller, 'admin');
      await requireDataSource(caller, id);
      return outcome(
        id,
        await store.deleteDataSource(caller.tenant.workspaceId, id, auditContextOf(clock, caller)),
        'remove it from their mappings first',
      );
    },
  };
}

const notFound = failure.dataSourceNotFound;

function outcome(id: number, change: DataSourceChange, whileInUse: string): DataSourceRecord {
  if (change.status === 'changed') return change.dataSource;
  if (change.status === 'not_found') throw notFound(id);
  throw failure.dataSourceInUse(id, change.usedBy, whileInUse);
}
