import type { PostgresMigration } from '../migrate.js';

/*
 * Two additions for moving both environments of a workspace from the hosted product
 * (docs/adr/0003-shared-data-sources-and-kept-team-ids.md):
 * - `data_sources.shared`: a shared data source is mappable from every environment of its workspace,
 *   so Customer and Testing can both map {"40": "213"} to the one data source numbered 213.
 * - `team_id_gaps`: the ranges of team_ids that the numbering jumped over when an import kept a
 *   team_id above every one issued. A number in a gap was never issued, so a later line of an import
 *   may still keep it, whatever the order of the lines.
 * An expand step: the previous release neither reads nor writes either (a column with a constant
 * default is added without rewriting the table), and a data source it creates is not shared, what it
 * assumes.
 */
export const sharedDataSourcesAndTeamIdGaps: PostgresMigration = {
  version: 15,
  name: 'shared data sources and team id gaps',
  kind: 'expand',
  sql: `
ALTER TABLE data_sources ADD COLUMN IF NOT EXISTS shared boolean NOT NULL DEFAULT false;
CREATE TABLE IF NOT EXISTS team_id_gaps (
  low bigint PRIMARY KEY,
  high bigint NOT NULL,
  CHECK (high >= low)
);
`,
};
