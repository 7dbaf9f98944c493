import type { Migration } from '../../migration.js';

/*
 * Schema and data-source ids become numbers of their workspace (docs/api.md#schema-and-data-source-ids); see the SQLite migration
 * of the same number for the design. The row id stays the internal key; `number` is the public id.
 * Existing workspaces continue above the identity sequences' high-water marks, which count the data
 * sources deleted since.
 */
export const catalogueNumbers: Migration = {
  version: 10,
  name: 'catalogue numbers',
  kind: 'contract',
  sql: `
ALTER TABLE workspaces ADD COLUMN last_schema_id bigint NOT NULL DEFAULT 0;
ALTER TABLE workspaces ADD COLUMN last_data_source_id bigint NOT NULL DEFAULT 0;
ALTER TABLE schemas ADD COLUMN number bigint;
UPDATE schemas SET number = id;
ALTER TABLE schemas ALTER COLUMN number SET NOT NULL;
ALTER TABLE schemas ADD CONSTRAINT schemas_number_key UNIQUE (workspace_id, number);
ALTER TABLE data_sources ADD COLUMN number bigint;
UPDATE data_sources SET number = id;
ALTER TABLE data_sources ALTER COLUMN number SET NOT NULL;
ALTER TABLE data_sources ADD CONSTRAINT data_sources_number_key UNIQUE (workspace_id, number);
-- The mapping rows carry the public numbers too (ids never change), so that reading a group's mapping
-- joins nothing: its plan cannot turn on the catalogue tables' statistics.
ALTER TABLE user_group_mappings ADD COLUMN schema_number bigint;
ALTER TABLE user_group_mappings ADD COLUMN data_source_number bigint;
UPDATE user_group_mappings SET schema_number = schema_id, data_source_number = data_source_id;
ALTER TABLE user_group_mappings ALTER COLUMN schema_number SET NOT NULL;
ALTER TABLE user_group_mappings ALTER COLUMN data_source_number SET NOT NULL;
UPDATE workspaces SET
  last_schema_id = (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM schemas_id_seq),
  last_data_source_id = (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM data_sources_id_seq);
`,
};
