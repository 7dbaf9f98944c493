import type { Migration } from '../../migration.js';

/*
 * Access rules (docs/api.md#access-rules): a group's own rules as a JSON array, NULL when it has none (most groups).
 * Reads take it whole, with each ancestor's, to build the group's effective rules; the rule-count
 * bound counts it with json_array_length. A rule's schema is named by its public number, as mappings
 * are, and is checked against the catalogue when the rule is written.
 */
export const accessRules: Migration = {
  version: 11,
  name: 'access rules',
  kind: 'contract',
  sql: `
ALTER TABLE user_groups ADD COLUMN access_rules TEXT CHECK (access_rules IS NULL OR json_type(access_rules) = 'array');
`,
};
