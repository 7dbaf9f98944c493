import type { Migration } from '../../migration.js';

/*
 * Responses kept for safe retries (docs/adr/0007-idempotency-records.md). A row is a claim while
 * `response` is NULL and a finished request once it holds the response's ciphertext. The key itself
 * is not kept, only its SHA-256: equality is all the service needs. created_at is the claim's time;
 * expiry and abandonment are both measured from it, and the index serves the purge. `id` is for
 * key rotation, which re-encrypts stored responses in id order like every other ciphertext; a
 * plain rowid, since an id may be reused once its record is purged.
 */
export const idempotencyKeys: Migration = {
  version: 2,
  name: 'idempotency-keys',
  kind: 'contract',
  sql: `
CREATE TABLE idempotency_keys (
  id INTEGER PRIMARY KEY,
  api_token_id INTEGER NOT NULL REFERENCES api_tokens(id) ON DELETE CASCADE,
  key_hash TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  created_at TEXT NOT NULL,
  response TEXT,
  UNIQUE (api_token_id, key_hash)
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys(created_at);
`,
};
