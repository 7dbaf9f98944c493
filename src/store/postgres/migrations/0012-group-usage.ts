import type { Migration } from '../../migration.js';

/* The same table and meaning as SQLite's 0012 (see there). */
export const groupUsage: Migration = {
  version: 12,
  name: 'group usage',
  kind: 'contract',
  sql: `
CREATE TABLE group_usage (
  team_id bigint NOT NULL,
  day date NOT NULL,
  workspace_id bigint NOT NULL,
  environment text NOT NULL,
  embed_tokens_minted bigint NOT NULL DEFAULT 0,
  verifications bigint NOT NULL DEFAULT 0,
  reads bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (team_id, day)
);
CREATE INDEX group_usage_tenant_day ON group_usage (workspace_id, environment, day);
CREATE INDEX group_usage_day ON group_usage (day);
`,
};
