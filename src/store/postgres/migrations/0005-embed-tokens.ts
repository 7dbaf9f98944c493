import type { Migration } from '../../migration.js';

/*
 * Embed tokens (docs/api.md#embed-tokens): as SQLite's migration 5 says. The new user_groups column has a constant
 * default, so adding it rewrites no row.
 */
export const embedTokens: Migration = {
  version: 5,
  name: 'embed tokens',
  kind: 'contract',
  sql: `
CREATE TABLE signing_keys (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id bigint NOT NULL REFERENCES workspaces(id),
  kid text COLLATE "C" NOT NULL UNIQUE,
  public_jwk text NOT NULL,
  private_key_ciphertext text NOT NULL,
  created_at timestamptz NOT NULL,
  retired_at timestamptz
);
CREATE UNIQUE INDEX signing_keys_current ON signing_keys (workspace_id) WHERE retired_at IS NULL;
ALTER TABLE user_groups ADD COLUMN token_generation bigint NOT NULL DEFAULT 0;
`,
};
