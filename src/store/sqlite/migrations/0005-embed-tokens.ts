import type { Migration } from '../../migration.js';

/*
 * Embed tokens (docs/api.md#embed-tokens). signing_keys: each workspace's P-256 key pairs, the private half as a
 * keyring ciphertext (so `ugs keys rotate` re-encrypts it with the tokens); one current key per
 * workspace (retired_at NULL), which the partial unique index makes the database's rule, so
 * instances creating the first key at once agree on one. user_groups.token_generation counts the
 * group token's rotations: an embed token carries the generation it was minted under, and verify
 * refuses one minted before the latest rotation with a single comparison.
 */
export const embedTokens: Migration = {
  version: 5,
  name: 'embed tokens',
  kind: 'contract',
  sql: `
CREATE TABLE signing_keys (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
  kid TEXT NOT NULL UNIQUE,
  public_jwk TEXT NOT NULL,
  private_key_ciphertext TEXT NOT NULL,
  created_at TEXT NOT NULL,
  retired_at TEXT
);
CREATE UNIQUE INDEX signing_keys_current ON signing_keys(workspace_id) WHERE retired_at IS NULL;
ALTER TABLE user_groups ADD COLUMN token_generation INTEGER NOT NULL DEFAULT 0;
`,
};
