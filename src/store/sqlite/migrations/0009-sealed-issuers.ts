import type { Migration } from '../../migration.js';

/*
 * Environments sealed for offline verifiers (docs/api.md#embed-tokens). Each signing key belongs to one
 * environment of its workspace, and each environment has its own current key (the partial unique
 * index, now per workspace and environment). The keys that exist are Customer's, whose issuer is the
 * one they signed under. The published keys of an issuer are read through their own index (current
 * and recently retired), never by loading every key the issuer ever had.
 *
 * The moment this migration is applied (its schema_migrations.applied_at) is the recorded moment the
 * service began signing low-S: the code that carries it is the code that normalises S, so verify
 * refuses a high-S signature on any token issued from then on.
 */
export const sealedIssuers: Migration = {
  version: 9,
  name: 'sealed issuers',
  kind: 'contract',
  sql: `
ALTER TABLE signing_keys ADD COLUMN environment TEXT NOT NULL DEFAULT 'Customer'
  CHECK (environment IN ('Customer', 'Testing'));
DROP INDEX signing_keys_current;
CREATE UNIQUE INDEX signing_keys_current ON signing_keys(workspace_id, environment) WHERE retired_at IS NULL;
CREATE INDEX signing_keys_published ON signing_keys(workspace_id, environment, retired_at);
`,
};
