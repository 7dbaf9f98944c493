import type { Migration } from '../../migration.js';

/*
 * Usage per group and per UTC day (docs/api.md#usage-per-group). Rows are added to, never replaced: every serving
 * process writes what it counted since its last write with `count = count + excluded.count`. No
 * foreign key to user_groups: a count flushed after its group was deleted is kept (and pruned with
 * its day) rather than failing the batch it came in; the reads show only groups that exist. The
 * tenant is kept on the row so that the busiest groups of an environment are read by index.
 */
export const groupUsage: Migration = {
  version: 12,
  name: 'group usage',
  kind: 'contract',
  sql: `
CREATE TABLE group_usage (
  team_id INTEGER NOT NULL,
  day TEXT NOT NULL,
  workspace_id INTEGER NOT NULL,
  environment TEXT NOT NULL,
  embed_tokens_minted INTEGER NOT NULL DEFAULT 0,
  verifications INTEGER NOT NULL DEFAULT 0,
  reads INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (team_id, day)
) WITHOUT ROWID;
CREATE INDEX group_usage_tenant_day ON group_usage(workspace_id, environment, day);
CREATE INDEX group_usage_day ON group_usage(day);
`,
};
