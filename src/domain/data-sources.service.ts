import { AppError } from './errors.js';
import type { Clock } from './clock.js';
import type { DataSourceRecord } from './models.js';
import { requireScope } from './scopes.js';
import type { Caller, Environment } from './tenancy.js';
import type { DataSourceStore, SchemaStore } from '../store/store.js';

export interface NewDataSourceInput {
  providedId: string;
  name: string;
  schemaId: number;
  /** Defaults to the caller's environment. */
  environment?: Environment;
}

export type DataSourceService = ReturnType<typeof createDataSourceService>;

export function createDataSourceService({ store, clock }: { store: DataSourceStore & Pick<SchemaStore, 'findSchemasByIds'>; clock: Clock }) {
  return {
    async createDataSource(caller: Caller, input: NewDataSourceInput): Promise<DataSourceRecord> {
      requireScope(caller, 'admin');
      const [schema] = await store.findSchemasByIds(caller.tenant.workspaceId, [input.schemaId]);
      if (!schema) throw new AppError('unknown_schema', `Schema ${input.schemaId} does not exist.`, { field: 'schema_id' });
      const environment = input.environment ?? caller.tenant.environment;
      return store.insertDataSource(
        { tenant: { workspaceId: caller.tenant.workspaceId, environment }, providedId: input.providedId, name: input.name, schemaId: input.schemaId, createdAt: clock() },
        { at: clock(), actor: caller.actor, requestId: caller.requestId },
      );
    },

    /** The data sources of one environment: the given one, else the caller's. */
    async listDataSources(caller: Caller, environment?: Environment): Promise<DataSourceRecord[]> {
      requireScope(caller, 'admin');
      return store.listDataSources(caller.tenant.workspaceId, environment ?? caller.tenant.environment);
    },
  };
}
