import type { Migration } from '../../migration.js';

/* The same table and meaning as SQLite's 0002 (see there). */
export const idempotencyKeys: Migration = {
  version: 2,
  name: 'idempotency-keys',
  kind: 'contract',
  sql: `
CREATE TABLE idempotency_keys (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  api_token_id bigint NOT NULL REFERENCES api_tokens(id) ON DELETE CASCADE,
  key_hash text NOT NULL,
  fingerprint text NOT NULL,
  created_at timestamptz NOT NULL,
  response text,
  UNIQUE (api_token_id, key_hash)
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);
`,
};
