import type { DataSourceRecord } from '../domain/data-sources/data-source.records.js';
import type { DataSource } from './data-sources.schemas.js';

/** A data source as the API and the CLI show it. */
export const toDataSource = (record: DataSourceRecord): DataSource => ({
  id: record.id,
  provided_id: record.providedId,
  name: record.name,
  schema_id: record.schemaId,
  api_environment_tag: record.environment,
  shared: record.shared,
});
