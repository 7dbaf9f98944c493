import type { Migration } from '../../migration.js';

/*
 * Schema and data-source ids become numbers of their workspace (docs/api.md#schema-and-data-source-ids), which an admin may choose
 * at creation so that mappings copied from the hosted product resolve. The row id stays the internal
 * key every foreign key, trigger and index already uses; `number` is the id the API shows and takes,
 * unique per workspace. Existing rows keep their ids as their numbers, so every stored mapping reads
 * back unchanged. Each workspace remembers the highest number it has issued (never reused, even after
 * a delete); a workspace that exists now continues above every id the deployment has issued, which
 * covers the data sources it has deleted.
 */
export const catalogueNumbers: Migration = {
  version: 10,
  name: 'catalogue numbers',
  kind: 'contract',
  sql: `
ALTER TABLE workspaces ADD COLUMN last_schema_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE workspaces ADD COLUMN last_data_source_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE schemas ADD COLUMN number INTEGER NOT NULL DEFAULT 0;
UPDATE schemas SET number = id;
CREATE UNIQUE INDEX schemas_number ON schemas(workspace_id, number);
ALTER TABLE data_sources ADD COLUMN number INTEGER NOT NULL DEFAULT 0;
UPDATE data_sources SET number = id;
CREATE UNIQUE INDEX data_sources_number ON data_sources(workspace_id, number);
-- The mapping rows carry the public numbers too (ids never change): reading a mapping joins nothing.
ALTER TABLE user_group_mappings ADD COLUMN schema_number INTEGER NOT NULL DEFAULT 0;
ALTER TABLE user_group_mappings ADD COLUMN data_source_number INTEGER NOT NULL DEFAULT 0;
UPDATE user_group_mappings SET schema_number = schema_id, data_source_number = data_source_id;
UPDATE workspaces SET
  last_schema_id = coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'schemas'), 0),
  last_data_source_id = coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'data_sources'), 0);
`,
};
