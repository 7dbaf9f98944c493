/*
 * Schema and data-source ids are numbers of their workspace (migration 0010): the row id stays the
 * internal key of every foreign key, and `number` is what the API shows and takes. These are the SQL
 * fragments both engines use to translate between the two.
 */

/** The workspace column that remembers the highest number it has issued, per kind. */
export const HIGH_WATER_COLUMN = { schemas: 'last_schema_id', data_sources: 'last_data_source_id' } as const;

/** The row id of the schema numbered `number` in `workspace` (SQL expressions); NULL when there is none. */
export const schemaRowId = (workspace: string, number: string) =>
  `(SELECT id FROM schemas WHERE workspace_id = ${workspace} AND number = ${number})`;

/** The row id of the data source numbered `number` in `workspace`; NULL when there is none. */
export const dataSourceRowId = (workspace: string, number: string) =>
  `(SELECT id FROM data_sources WHERE workspace_id = ${workspace} AND number = ${number})`;

/** Data source columns with the public numbers, over `data_sources d JOIN schemas s`. */
export const DATA_SOURCES_WITH_SCHEMA = 'data_sources d JOIN schemas s ON s.id = d.schema_id';
