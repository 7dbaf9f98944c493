import type { PostgresMigration } from '../migrate.js';

/*
 * Revocation of embed tokens for offline verifiers: SQLite's step 15 (0015-embed-token-revocations.ts
 * says what each table and trigger is for). One trigger function for both changes; `now()` is the
 * transaction's start, which every row of one change shares. An expand step.
 */
export const embedTokenRevocations: PostgresMigration = {
  version: 16,
  name: 'embed token revocations',
  kind: 'expand',
  sql: `
CREATE TABLE IF NOT EXISTS embed_token_revocations (
  id bigserial PRIMARY KEY,
  workspace_id bigint NOT NULL,
  environment text NOT NULL,
  team_id bigint,
  before_generation bigint,
  jti text,
  expires_at bigint NOT NULL,
  CHECK ((team_id IS NOT NULL AND before_generation IS NOT NULL AND jti IS NULL)
    OR (jti IS NOT NULL AND before_generation IS NULL))
);
CREATE INDEX IF NOT EXISTS embed_token_revocations_issuer ON embed_token_revocations (workspace_id, environment, id);
CREATE INDEX IF NOT EXISTS embed_token_revocations_expiry ON embed_token_revocations (expires_at);
CREATE UNIQUE INDEX IF NOT EXISTS embed_token_revocations_jti
  ON embed_token_revocations (workspace_id, environment, jti) WHERE jti IS NOT NULL;

CREATE TABLE IF NOT EXISTS embed_revocation_keys (
  id integer PRIMARY KEY CHECK (id = 1),
  secret text NOT NULL
);
INSERT INTO embed_revocation_keys (id, secret)
  VALUES (1, encode(sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex'))
  ON CONFLICT (id) DO NOTHING;

CREATE OR REPLACE FUNCTION embed_token_revocations_written() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO embed_token_revocations (workspace_id, environment, team_id, before_generation, expires_at)
      VALUES (OLD.workspace_id, OLD.environment, OLD.team_id, OLD.token_generation + 1,
        extract(epoch FROM now())::bigint + 86700);
    RETURN OLD;
  END IF;
  IF NEW.token_generation > OLD.token_generation THEN
    INSERT INTO embed_token_revocations (workspace_id, environment, team_id, before_generation, expires_at)
      VALUES (NEW.workspace_id, NEW.environment, NEW.team_id, NEW.token_generation,
        extract(epoch FROM now())::bigint + 86700);
  END IF;
  RETURN NEW;
END
$fn$;
DROP TRIGGER IF EXISTS embed_token_revocations_written ON user_groups;
CREATE TRIGGER embed_token_revocations_written AFTER UPDATE OF token_generation OR DELETE ON user_groups
  FOR EACH ROW EXECUTE FUNCTION embed_token_revocations_written();
`,
};
