import type { Migration } from '../../migration.js';

/* The same table and meaning as SQLite's 0008 (see there). */
export const consoleSessions: Migration = {
  version: 8,
  name: 'console-sessions',
  kind: 'contract',
  sql: `
CREATE TABLE console_sessions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id_hash text NOT NULL UNIQUE,
  api_token_id bigint NOT NULL REFERENCES api_tokens(id),
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX console_sessions_expires_at ON console_sessions (expires_at);
`,
};
