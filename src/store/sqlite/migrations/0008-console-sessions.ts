import type { Migration } from '../../migration.js';

/*
 * Admin console sessions (docs/security.md#admin-console-sessions). A session is known by the SHA-256 of its secret (the cookie's
 * value), never the secret itself, and acts as its API token: a lookup joins the token and finds a
 * session only while the token is live. expires_at (the earlier of the idle and the absolute expiry,
 * moved on by each recorded use) is for the purge, which walks its index.
 */
export const consoleSessions: Migration = {
  version: 8,
  name: 'console-sessions',
  kind: 'contract',
  sql: `
CREATE TABLE console_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  id_hash TEXT NOT NULL UNIQUE,
  api_token_id INTEGER NOT NULL REFERENCES api_tokens(id),
  created_at TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX console_sessions_expires_at ON console_sessions(expires_at);
`,
};
