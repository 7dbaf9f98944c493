import type { Migration } from '../../migration.js';

export const initial: Migration = {
  version: 1,
  name: 'initial',
  kind: 'contract',
  sql: `
CREATE TABLE workspaces (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);

CREATE TABLE api_tokens (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
  environment TEXT NOT NULL CHECK (environment IN ('Customer', 'Testing')),
  name TEXT NOT NULL,
  scope TEXT NOT NULL CHECK (scope IN ('read', 'write', 'admin')),
  token_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT
);
CREATE INDEX api_tokens_workspace ON api_tokens(workspace_id, id);

CREATE TABLE schemas (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (workspace_id, name)
);

CREATE TABLE data_sources (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
  environment TEXT NOT NULL CHECK (environment IN ('Customer', 'Testing')),
  provided_id TEXT NOT NULL,
  name TEXT NOT NULL,
  schema_id INTEGER NOT NULL REFERENCES schemas(id),
  created_at TEXT NOT NULL,
  UNIQUE (workspace_id, environment, provided_id)
);

-- AUTOINCREMENT so that a deleted group's team_id is never handed to a new group.
CREATE TABLE user_groups (
  team_id INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
  environment TEXT NOT NULL CHECK (environment IN ('Customer', 'Testing')),
  provided_id TEXT NOT NULL,
  name TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  token_ciphertext TEXT NOT NULL,
  properties TEXT,
  version INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (workspace_id, environment, provided_id)
);
CREATE INDEX user_groups_tenant ON user_groups(workspace_id, environment, team_id);

CREATE TABLE user_group_mappings (
  team_id INTEGER NOT NULL REFERENCES user_groups(team_id) ON DELETE CASCADE,
  schema_id INTEGER NOT NULL REFERENCES schemas(id),
  data_source_id INTEGER NOT NULL REFERENCES data_sources(id) ON DELETE RESTRICT,
  PRIMARY KEY (team_id, schema_id)
) WITHOUT ROWID;
CREATE INDEX user_group_mappings_data_source ON user_group_mappings(data_source_id);

CREATE TABLE audit_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL,
  workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
  environment TEXT CHECK (environment IN ('Customer', 'Testing')),
  actor_type TEXT NOT NULL CHECK (actor_type IN ('api_token', 'cli')),
  actor_api_token_id INTEGER,
  actor_name TEXT,
  action TEXT NOT NULL,
  team_id INTEGER,
  provided_id TEXT,
  changes TEXT,
  request_id TEXT
);
CREATE INDEX audit_events_workspace ON audit_events(workspace_id, id);
`,
};
