import type { Migration } from '../../migration.js';

/*
 * Single-use embed tokens (docs/api.md#single-use-tokens): the `jti` of each one consumed, inserted only if
 * absent, so that exactly one online verify or introspection wins. A record leaves once its token has
 * expired (expires_at), since the token is refused from then on anyway. `consumer` is a hash of the
 * API token and Idempotency-Key that consumed it (or NULL): the same caller's retry is answered as its
 * first try was. An expand step: a previous release never reads it.
 */
export const consumedEmbedTokens: Migration = {
  version: 16,
  name: 'consumed embed tokens',
  kind: 'expand',
  sql: `
CREATE TABLE IF NOT EXISTS consumed_embed_tokens (
  workspace_id INTEGER NOT NULL,
  jti TEXT NOT NULL,
  consumer TEXT,
  consumed_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  PRIMARY KEY (workspace_id, jti)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS consumed_embed_tokens_expiry ON consumed_embed_tokens(expires_at);
`,
};
