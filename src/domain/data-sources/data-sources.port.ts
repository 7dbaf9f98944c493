import type { AuditContext } from '../audit/audit.records.js';
import type { Environment, Tenant } from '../tenancy.js';
import type { DataSourcePatch, DataSourceRecord, NewDataSource } from './data-source.records.js';
import type { DataSourceChange } from './data-sources.rules.js';

/** References to data sources as a mapping or a guard names them, resolved inside one tenant. */
export interface DataSourceRefs {
  ids: number[];
  providedIds: string[];
}

export interface DataSourceStore {
  /**
   * Throws `data_source_id_taken` when the tenant has a data source with that provided id, `id_taken`
   * when the workspace has one numbered `dataSource.id`; without an id, numbered as schemas are.
   */
  insertDataSource(dataSource: NewDataSource, audit: AuditContext): Promise<DataSourceRecord>;
  /** The workspace's data sources; with `environment`, those of it and the shared ones of every environment. */
  listDataSources(workspaceId: number, environment?: Environment): Promise<DataSourceRecord[]>;
  findDataSourceById(workspaceId: number, id: number): Promise<DataSourceRecord | null>;
  /**
   * Every data source the tenant may map (its environment's own and the workspace's shared ones) whose
   * id is in `refs.ids` or whose provided id is in `refs.providedIds`; the tenant's own first.
   */
  findDataSources(tenant: Tenant, refs: DataSourceRefs): Promise<DataSourceRecord[]>;
  /**
   * Applies the patch as `planDataSourceUpdate` decides over the locked row (src/domain/data-sources/data-sources.rules.ts).
   * Throws `data_source_id_taken` when the new provided id collides.
   */
  updateDataSource(
    workspaceId: number,
    id: number,
    patch: DataSourcePatch,
    audit: AuditContext,
  ): Promise<DataSourceChange>;
  /** Deletes it as `planDataSourceDeletion` decides over the locked row. */
  deleteDataSource(workspaceId: number, id: number, audit: AuditContext): Promise<DataSourceChange>;
}
