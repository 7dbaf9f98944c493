import type { Migration } from '../../migration.js';

/*
 * A mapping entry names a schema and a data source, and the data source must serve that schema
 * (docs/api.md#wire-conventions). The domain checks it before writing, but a concurrent change of the data source's
 * schema could land in between; the composite foreign key makes the database check the pair inside
 * the write itself. Its check takes a key-share lock on the data source, which the schema change's
 * update (a key column now) conflicts with, so one of the two waits for the other and then fails.
 * NOT VALID: rows written before this migration are not re-checked (a mapping that such a race may
 * have left behind stays readable); every write from now on is.
 */
export const mappingSchemaAgreement: Migration = {
  version: 4,
  name: 'mapping schema agreement',
  kind: 'contract',
  sql: `
ALTER TABLE data_sources ADD CONSTRAINT data_sources_id_schema_key UNIQUE (id, schema_id);
ALTER TABLE user_group_mappings ADD CONSTRAINT user_group_mappings_data_source_schema_fkey
  FOREIGN KEY (data_source_id, schema_id) REFERENCES data_sources (id, schema_id) NOT VALID;
`,
};
