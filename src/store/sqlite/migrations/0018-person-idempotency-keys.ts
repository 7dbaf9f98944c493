import type { Migration } from '../../migration.js';

/*
 * Idempotency keys of people (docs/api.md#safe-retries-idempotency-key): a kept response is owned by
 * an API token or by a person (their workspace, issuer and sub, as one JSON text in person_key), never
 * both, never neither. SQLite cannot drop a NOT NULL in place, so the table is rebuilt with the same
 * ids and rows; an older program reads and writes it as before (its claims name an API token, whose
 * unique key stays), and a person's row, whose api_token_id is NULL, is never one it finds.
 */
export const personIdempotencyKeys: Migration = {
  version: 18,
  name: 'person-idempotency-keys',
  kind: 'expand',
  sql: `
CREATE TABLE idempotency_keys_owned (
  id INTEGER PRIMARY KEY,
  api_token_id INTEGER REFERENCES api_tokens(id) ON DELETE CASCADE,
  key_hash TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  created_at TEXT NOT NULL,
  response TEXT,
  person_key TEXT,
  UNIQUE (api_token_id, key_hash),
  CHECK ((api_token_id IS NULL) <> (person_key IS NULL))
);
INSERT INTO idempotency_keys_owned (id, api_token_id, key_hash, fingerprint, created_at, response)
  SELECT id, api_token_id, key_hash, fingerprint, created_at, response FROM idempotency_keys;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_owned RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_created_at ON idempotency_keys(created_at);
CREATE UNIQUE INDEX idempotency_keys_person ON idempotency_keys(person_key, key_hash) WHERE person_key IS NOT NULL;
`,
};
