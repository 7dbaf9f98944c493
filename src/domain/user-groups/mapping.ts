import { failure } from '../errors.js';
import type { DataSourceRecord } from '../data-sources/data-source.records.js';
import type { MappingEntry } from './user-group.records.js';
import type { DataSourceStore } from '../data-sources/data-sources.port.js';
import type { SchemaStore } from '../schemas/schemas.port.js';
import type { Tenant } from '../tenancy.js';

/** As callers send it: schema id → data source id (number or digit string) or data source provided id. */
export type MappingInput = Record<string, number | string>;

export type MappingResolver = (input: MappingInput) => MappingEntry[];

export type MappingCatalogueStore = Pick<SchemaStore, 'findSchemasByIds'> & Pick<DataSourceStore, 'findDataSources'>;

const DIGITS = /^[0-9]+$/;

/** The data source id a digit string may be; none when it is too large for one (then it is a provided id only). */
function idOf(ref: string): number | undefined {
  if (!DIGITS.test(ref)) return undefined;
  const id = Number(ref);
  return Number.isSafeInteger(id) ? id : undefined;
}

/** Resolves one mapping inside the tenant; see `createMappingResolver` for the rules. */
export async function resolveMapping(
  store: MappingCatalogueStore,
  tenant: Tenant,
  input: MappingInput,
): Promise<MappingEntry[]> {
  if (Object.keys(input).length === 0) return [];
  return (await createMappingResolver(store, tenant, [input]))(input);
}

/**
 * Loads, in two queries, the schemas and data sources that `inputs` refer to, and returns a resolver
 * for each of them, so that a bulk import does not query per line. A string value names a data
 * source by provided id first (the caller's own namespace) and, when it is all digits and no provided
 * id matches, by id. The resolver throws the AppError that names what is wrong.
 */
export async function createMappingResolver(
  store: MappingCatalogueStore,
  tenant: Tenant,
  inputs: MappingInput[],
): Promise<MappingResolver> {
  const entries = inputs.flatMap((input) => Object.entries(input));
  const schemaIds = [...new Set(entries.map(([schemaKey]) => Number(schemaKey)))];
  const ids = new Set<number>();
  const providedIds = new Set<string>();
  for (const [, ref] of entries) {
    if (typeof ref === 'number') ids.add(ref);
    else {
      providedIds.add(ref);
      const id = idOf(ref);
      if (id !== undefined) ids.add(id);
    }
  }
  const [schemas, dataSources] = await Promise.all([
    schemaIds.length ? store.findSchemasByIds(tenant.workspaceId, schemaIds) : [],
    ids.size || providedIds.size ? store.findDataSources(tenant, { ids: [...ids], providedIds: [...providedIds] }) : [],
  ]);
  const knownSchemas = new Set(schemas.map((schema) => schema.id));
  return (input) => resolveWith(knownSchemas, dataSources, input);
}

function resolveWith(knownSchemas: Set<number>, dataSources: DataSourceRecord[], input: MappingInput): MappingEntry[] {
  return Object.entries(input)
    .map(([schemaKey, ref]) => {
      const schemaId = Number(schemaKey);
      if (!knownSchemas.has(schemaId)) {
        throw failure.unknownSchema(schemaKey, 'mapping');
      }
      const dataSource = findReferenced(dataSources, ref);
      if (!dataSource) {
        throw failure.unknownDataSource(ref);
      }
      if (dataSource.schemaId !== schemaId) {
        throw failure.dataSourceSchemaMismatch(ref, dataSource.schemaId, schemaId);
      }
      return { schemaId, dataSourceId: dataSource.id };
    })
    .sort((a, b) => a.schemaId - b.schemaId);
}

function findReferenced(dataSources: DataSourceRecord[], ref: number | string): DataSourceRecord | undefined {
  if (typeof ref === 'number') return dataSources.find((dataSource) => dataSource.id === ref);
  return (
    dataSources.find((dataSource) => dataSource.providedId === ref) ??
    dataSources.find((dataSource) => dataSource.id === idOf(ref))
  );
}

/** The wire form: schema id → data source id, both strings. */
export function mappingToRecord(mapping: MappingEntry[]): Record<string, string> {
  return Object.fromEntries(mapping.map((entry) => [String(entry.schemaId), String(entry.dataSourceId)]));
}
