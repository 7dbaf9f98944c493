import type { PostgresMigration } from '../migrate.js';

/*
 * Console sign-in through an identity provider (docs/security.md, "Console sign-in through an
 * identity provider"): the flows under way (by the SHA-256 of their state; nothing secret stored), the
 * sessions of people (by the SHA-256 of their secret, with the access the provider's claim gave), and
 * people as audit actors: (issuer, sub) in two new columns, the email in actor_name. The actor_type
 * CHECK is widened without a rewrite (NOT VALID: every existing row satisfies the narrower one).
 */
export const consolePeople: PostgresMigration = {
  version: 18,
  name: 'console people',
  kind: 'expand',
  sql: `
CREATE TABLE oidc_flows (
  state_hash text PRIMARY KEY,
  browser_hash text NOT NULL,
  return_to text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX oidc_flows_expires_at ON oidc_flows (expires_at);

CREATE TABLE person_sessions (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id_hash text NOT NULL UNIQUE,
  issuer text NOT NULL,
  subject text NOT NULL,
  email text,
  access jsonb NOT NULL,
  workspace_id bigint NOT NULL REFERENCES workspaces(id),
  environment text NOT NULL CHECK (environment IN ('Customer', 'Testing')),
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  renew_at timestamptz NOT NULL
);
CREATE INDEX person_sessions_expires_at ON person_sessions (expires_at);
CREATE INDEX person_sessions_person ON person_sessions (workspace_id, issuer, subject);

ALTER TABLE audit_events DROP CONSTRAINT IF EXISTS audit_events_actor_type_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_actor_type_check
  CHECK (actor_type IN ('api_token', 'cli', 'person')) NOT VALID;
ALTER TABLE audit_events ADD COLUMN actor_issuer text;
ALTER TABLE audit_events ADD COLUMN actor_subject text;
`,
};
