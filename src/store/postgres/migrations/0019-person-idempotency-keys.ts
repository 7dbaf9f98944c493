import type { PostgresMigration } from '../migrate.js';

/*
 * Idempotency keys of people, as SQLite's 0018 (see there): api_token_id may be NULL when person_key
 * names the owner, and exactly one of them is set. Loosening NOT NULL and adding a nullable column
 * rewrite nothing; the CHECK reads the rows once (idempotency keys live a day, the table stays small).
 */
export const personIdempotencyKeys: PostgresMigration = {
  version: 19,
  name: 'person idempotency keys',
  kind: 'expand',
  sql: `
ALTER TABLE idempotency_keys ALTER COLUMN api_token_id DROP NOT NULL;
ALTER TABLE idempotency_keys ADD COLUMN person_key text;
ALTER TABLE idempotency_keys ADD CONSTRAINT idempotency_keys_one_owner
  CHECK ((api_token_id IS NULL) <> (person_key IS NULL));
CREATE UNIQUE INDEX idempotency_keys_person ON idempotency_keys (person_key, key_hash) WHERE person_key IS NOT NULL;
`,
};
