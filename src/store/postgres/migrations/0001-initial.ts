import type { Migration } from '../../migration.js';

/*
 * The same tables and meaning as SQLite's 0001. Ids are identities, so a deleted row's id is never
 * handed out again. provided_id is COLLATE "C" so that its ordering, and the prefix range search
 * builds on it, is code point order on any database locale. Names keep the database collation:
 * search folds their case with lower(), which folds letters beyond ASCII only when the database
 * uses a UTF-8 locale (C.UTF-8, en_US.UTF-8, …), never under plain "C". properties and changes are
 * json, not jsonb: json keeps the text exactly as written, key order included, and accepts the
 * \u0000 escape that jsonb refuses. Unique constraints are named for postgres-errors.ts.
 */
export const initial: Migration = {
  version: 1,
  name: 'initial',
  kind: 'contract',
  sql: `
CREATE TABLE workspaces (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name text NOT NULL CONSTRAINT workspaces_name_key UNIQUE,
  created_at timestamptz NOT NULL
);

CREATE TABLE api_tokens (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id bigint NOT NULL REFERENCES workspaces(id),
  environment text NOT NULL CHECK (environment IN ('Customer', 'Testing')),
  name text NOT NULL,
  scope text NOT NULL CHECK (scope IN ('read', 'write', 'admin')),
  token_hash text NOT NULL CONSTRAINT api_tokens_token_hash_key UNIQUE,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_tokens_workspace ON api_tokens (workspace_id, id);

CREATE TABLE schemas (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id bigint NOT NULL REFERENCES workspaces(id),
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  CONSTRAINT schemas_name_key UNIQUE (workspace_id, name)
);

CREATE TABLE data_sources (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id bigint NOT NULL REFERENCES workspaces(id),
  environment text NOT NULL CHECK (environment IN ('Customer', 'Testing')),
  provided_id text COLLATE "C" NOT NULL,
  name text NOT NULL,
  schema_id bigint NOT NULL REFERENCES schemas(id),
  created_at timestamptz NOT NULL,
  CONSTRAINT data_sources_provided_id_key UNIQUE (workspace_id, environment, provided_id)
);

CREATE TABLE user_groups (
  team_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id bigint NOT NULL REFERENCES workspaces(id),
  environment text NOT NULL CHECK (environment IN ('Customer', 'Testing')),
  provided_id text COLLATE "C" NOT NULL,
  name text NOT NULL,
  token_hash text NOT NULL CONSTRAINT user_groups_token_hash_key UNIQUE,
  token_ciphertext text NOT NULL,
  properties json,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CONSTRAINT user_groups_provided_id_key UNIQUE (workspace_id, environment, provided_id)
);
CREATE INDEX user_groups_tenant ON user_groups (workspace_id, environment, team_id);

CREATE TABLE user_group_mappings (
  team_id bigint NOT NULL REFERENCES user_groups(team_id) ON DELETE CASCADE,
  schema_id bigint NOT NULL REFERENCES schemas(id),
  data_source_id bigint NOT NULL REFERENCES data_sources(id) ON DELETE RESTRICT,
  PRIMARY KEY (team_id, schema_id)
);
CREATE INDEX user_group_mappings_data_source ON user_group_mappings (data_source_id);

CREATE TABLE audit_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at timestamptz NOT NULL,
  workspace_id bigint NOT NULL REFERENCES workspaces(id),
  environment text CHECK (environment IN ('Customer', 'Testing')),
  actor_type text NOT NULL CHECK (actor_type IN ('api_token', 'cli')),
  actor_api_token_id bigint,
  actor_name text,
  action text NOT NULL,
  team_id bigint,
  provided_id text,
  changes json,
  request_id text
);
CREATE INDEX audit_events_workspace ON audit_events (workspace_id, id);
`,
};
