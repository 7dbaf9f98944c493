import type { PostgresMigration } from '../migrate.js';

/* The same table and meaning as SQLite's 0016 (see there). An expand step: a previous release never reads it. */
export const consumedEmbedTokens: PostgresMigration = {
  version: 17,
  name: 'consumed embed tokens',
  kind: 'expand',
  sql: `
CREATE TABLE IF NOT EXISTS consumed_embed_tokens (
  workspace_id bigint NOT NULL,
  jti text NOT NULL,
  consumer text,
  consumed_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, jti)
);
CREATE INDEX IF NOT EXISTS consumed_embed_tokens_expiry ON consumed_embed_tokens (expires_at);
`,
};
