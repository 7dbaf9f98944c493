import type { Migration } from '../../migration.js';

/*
 * Console sign-in through an identity provider (docs/security.md, "Console sign-in through an
 * identity provider"): the flows under way (by the SHA-256 of their state; nothing secret stored), the
 * sessions of people (by the SHA-256 of their secret, with the access the provider's claim gave), and
 * people as audit actors: (issuer, sub) in two new columns, the email in actor_name. SQLite cannot
 * widen a CHECK in place, so audit_events is rebuilt with the same columns and rows; an older program
 * reads and writes it as before (an actor it does not know reads as `cli`).
 */
export const consolePeople: Migration = {
  version: 17,
  name: 'console-people',
  kind: 'expand',
  sql: `
CREATE TABLE oidc_flows (
  state_hash TEXT PRIMARY KEY,
  browser_hash TEXT NOT NULL,
  return_to TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX oidc_flows_expires_at ON oidc_flows(expires_at);

CREATE TABLE person_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  id_hash TEXT NOT NULL UNIQUE,
  issuer TEXT NOT NULL,
  subject TEXT NOT NULL,
  email TEXT,
  access TEXT NOT NULL,
  workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
  environment TEXT NOT NULL CHECK (environment IN ('Customer', 'Testing')),
  created_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  renew_at TEXT NOT NULL
);
CREATE INDEX person_sessions_expires_at ON person_sessions(expires_at);
CREATE INDEX person_sessions_person ON person_sessions(workspace_id, issuer, subject);

CREATE TABLE audit_events_people (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL,
  workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
  environment TEXT CHECK (environment IN ('Customer', 'Testing')),
  actor_type TEXT NOT NULL CHECK (actor_type IN ('api_token', 'cli', 'person')),
  actor_api_token_id INTEGER,
  actor_name TEXT,
  action TEXT NOT NULL,
  team_id INTEGER,
  provided_id TEXT,
  changes TEXT,
  request_id TEXT,
  sync_id TEXT,
  actor_issuer TEXT,
  actor_subject TEXT
);
INSERT INTO audit_events_people
  (id, at, workspace_id, environment, actor_type, actor_api_token_id, actor_name, action, team_id, provided_id, changes, request_id, sync_id)
  SELECT id, at, workspace_id, environment, actor_type, actor_api_token_id, actor_name, action, team_id, provided_id, changes, request_id, sync_id
  FROM audit_events;
DROP TABLE audit_events;
ALTER TABLE audit_events_people RENAME TO audit_events;
CREATE INDEX audit_events_workspace ON audit_events(workspace_id, id);
CREATE INDEX audit_events_person ON audit_events(workspace_id, actor_subject, id) WHERE actor_subject IS NOT NULL;
`,
};
