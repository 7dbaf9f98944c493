import { AppError } from './errors.js';
import type { DataSourceRecord, MappingEntry } from './models.js';
import type { DataSourceStore, SchemaStore } from '../store/store.js';
import type { Tenant } from './tenancy.js';

/** As callers send it: schema id → data source id (number or digit string) or data source provided id. */
export type MappingInput = Record<string, number | string>;

const DIGITS = /^[0-9]+$/;

/**
 * Resolves a mapping inside the tenant. A string value names a data source by provided id first
 * (the caller's own namespace) and, when it is all digits and no provided id matches, by id.
 */
export async function resolveMapping(
  store: Pick<SchemaStore, 'findSchemasByIds'> & Pick<DataSourceStore, 'findDataSources'>,
  tenant: Tenant,
  input: MappingInput,
): Promise<MappingEntry[]> {
  const entries = Object.entries(input).map(([schemaKey, ref]) => ({ schemaId: Number(schemaKey), ref }));
  if (entries.length === 0) return [];

  const schemaIds = entries.map((entry) => entry.schemaId);
  const knownSchemas = new Set((await store.findSchemasByIds(tenant.workspaceId, schemaIds)).map((schema) => schema.id));
  const unknownSchema = entries.find((entry) => !knownSchemas.has(entry.schemaId));
  if (unknownSchema) {
    throw new AppError('unknown_schema', `Schema ${unknownSchema.schemaId} does not exist.`, { field: 'mapping' });
  }

  const ids = entries.flatMap(({ ref }) => (typeof ref === 'number' ? [ref] : DIGITS.test(ref) ? [Number(ref)] : []));
  const providedIds = entries.flatMap(({ ref }) => (typeof ref === 'string' ? [ref] : []));
  const dataSources = await store.findDataSources(tenant, { ids, providedIds });

  return entries
    .map(({ schemaId, ref }) => {
      const dataSource = findReferenced(dataSources, ref);
      if (!dataSource) {
        throw new AppError('unknown_data_source', `Data source ${JSON.stringify(ref)} does not exist in this environment.`, { field: 'mapping' });
      }
      if (dataSource.schemaId !== schemaId) {
        throw new AppError(
          'data_source_schema_mismatch',
          `Data source ${JSON.stringify(ref)} serves schema ${dataSource.schemaId}, not schema ${schemaId}.`,
          { field: 'mapping' },
        );
      }
      return { schemaId, dataSourceId: dataSource.id };
    })
    .sort((a, b) => a.schemaId - b.schemaId);
}

function findReferenced(dataSources: DataSourceRecord[], ref: number | string): DataSourceRecord | undefined {
  if (typeof ref === 'number') return dataSources.find((dataSource) => dataSource.id === ref);
  return (
    dataSources.find((dataSource) => dataSource.providedId === ref) ??
    (DIGITS.test(ref) ? dataSources.find((dataSource) => dataSource.id === Number(ref)) : undefined)
  );
}

/** The wire form: schema id → data source id, both strings. */
export function mappingToRecord(mapping: MappingEntry[]): Record<string, string> {
  return Object.fromEntries(mapping.map((entry) => [String(entry.schemaId), String(entry.dataSourceId)]));
}
