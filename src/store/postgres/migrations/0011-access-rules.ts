import type { Migration } from '../../migration.js';

/*
 * Access rules (docs/api.md#access-rules): as SQLite's migration 11 says, as json (kept as written, like properties).
 * The column has no default, so adding it rewrites no row.
 */
export const accessRules: Migration = {
  version: 11,
  name: 'access rules',
  kind: 'contract',
  sql: `
ALTER TABLE user_groups ADD COLUMN access_rules json
  CONSTRAINT user_groups_access_rules_array CHECK (access_rules IS NULL OR json_typeof(access_rules) = 'array');
`,
};
