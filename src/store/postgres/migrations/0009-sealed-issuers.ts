import type { Migration } from '../../migration.js';

/*
 * Environments sealed for offline verifiers (docs/api.md#embed-tokens): as SQLite's migration 9 says,
 * applied_at included. The new column has a constant default, so adding it rewrites no row; the
 * table holds a few keys per workspace, so its indexes are rebuilt in place.
 */
export const sealedIssuers: Migration = {
  version: 9,
  name: 'sealed issuers',
  kind: 'contract',
  sql: `
ALTER TABLE signing_keys ADD COLUMN environment text NOT NULL DEFAULT 'Customer'
  CHECK (environment IN ('Customer', 'Testing'));
DROP INDEX signing_keys_current;
CREATE UNIQUE INDEX signing_keys_current ON signing_keys (workspace_id, environment) WHERE retired_at IS NULL;
CREATE INDEX signing_keys_published ON signing_keys (workspace_id, environment, retired_at);
`,
};
