import type { Migration } from '../../migration.js';

/*
 * Revocation of embed tokens for offline verifiers (docs/api.md, "Embed token revocation"). One row
 * per revocation: a group's tokens minted under a token generation below `before_generation` (written
 * by a trigger whenever a group's generation rises — a rotation, an import or sync replacing its
 * token, an explicit revoke — or the group is deleted), or one token by its `jti`. The triggers write
 * the entries in the change's own transaction whichever program made the change, so an instance of
 * the previous release writes them too during a rolling upgrade. `expires_at` (Unix seconds) is when
 * no token the row could match is still valid: the longest token lifetime (24 h) and five minutes of
 * clock skew after the change, or the revoked token's `exp`.
 *
 * `embed_revocation_keys` holds the one random key under which a group's entry is published as a
 * keyed hash of its team_id (never in clear): this database holds the team_id beside it anyway.
 * An expand step: the previous release ignores both tables (and the triggers only add rows).
 */
export const embedTokenRevocations: Migration = {
  version: 15,
  name: 'embed token revocations',
  kind: 'expand',
  sql: `
CREATE TABLE IF NOT EXISTS embed_token_revocations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id INTEGER NOT NULL,
  environment TEXT NOT NULL,
  team_id INTEGER,
  before_generation INTEGER,
  jti TEXT,
  expires_at INTEGER NOT NULL,
  CHECK ((team_id IS NOT NULL AND before_generation IS NOT NULL AND jti IS NULL)
    OR (jti IS NOT NULL AND before_generation IS NULL))
);
CREATE INDEX IF NOT EXISTS embed_token_revocations_issuer ON embed_token_revocations(workspace_id, environment, id);
CREATE INDEX IF NOT EXISTS embed_token_revocations_expiry ON embed_token_revocations(expires_at);
CREATE UNIQUE INDEX IF NOT EXISTS embed_token_revocations_jti
  ON embed_token_revocations(workspace_id, environment, jti) WHERE jti IS NOT NULL;

CREATE TABLE IF NOT EXISTS embed_revocation_keys (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  secret TEXT NOT NULL
);
INSERT OR IGNORE INTO embed_revocation_keys (id, secret) VALUES (1, lower(hex(randomblob(32))));
-- A statement whose trigger may insert here (an UPDATE of user_groups that matches no row included)
-- makes SQLite record this table's AUTOINCREMENT counter; record it now, so that such a statement
-- leaves the database byte-for-byte as it was.
INSERT INTO sqlite_sequence (name, seq)
  SELECT 'embed_token_revocations', 0
  WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'embed_token_revocations');

CREATE TRIGGER IF NOT EXISTS embed_token_revocations_generation AFTER UPDATE OF token_generation ON user_groups
  WHEN NEW.token_generation > OLD.token_generation
BEGIN
  INSERT INTO embed_token_revocations (workspace_id, environment, team_id, before_generation, expires_at)
    VALUES (NEW.workspace_id, NEW.environment, NEW.team_id, NEW.token_generation, CAST(strftime('%s', 'now') AS INTEGER) + 86700);
END;
CREATE TRIGGER IF NOT EXISTS embed_token_revocations_deletion AFTER DELETE ON user_groups
BEGIN
  INSERT INTO embed_token_revocations (workspace_id, environment, team_id, before_generation, expires_at)
    VALUES (OLD.workspace_id, OLD.environment, OLD.team_id, OLD.token_generation + 1, CAST(strftime('%s', 'now') AS INTEGER) + 86700);
END;
`,
};
