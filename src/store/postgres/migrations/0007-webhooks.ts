import type { Migration } from '../../migration.js';

/*
 * Webhooks (docs/api.md#webhooks): as SQLite's migration 7 says, with events as a text array (the outbox's
 * match is an array overlap) and identity keys, whose values follow the order rows are written in.
 */
export const webhooks: Migration = {
  version: 7,
  name: 'webhooks',
  kind: 'contract',
  sql: `
CREATE TABLE webhook_endpoints (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workspace_id bigint NOT NULL REFERENCES workspaces(id),
  environment text NOT NULL CHECK (environment IN ('Customer', 'Testing')),
  url text NOT NULL,
  events text[] NOT NULL,
  description text NOT NULL,
  enabled boolean NOT NULL,
  secret_ciphertext text NOT NULL,
  previous_secret_ciphertext text,
  previous_secret_expires_at timestamptz,
  failing_since timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints (workspace_id, environment);
CREATE TABLE webhook_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  public_id text COLLATE "C" NOT NULL UNIQUE,
  workspace_id bigint NOT NULL REFERENCES workspaces(id),
  environment text,
  type text NOT NULL,
  body text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX webhook_events_created ON webhook_events (created_at);
CREATE TABLE webhook_deliveries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id bigint NOT NULL REFERENCES webhook_events(id),
  endpoint_id bigint NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  ordering_key text COLLATE "C" NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  lease_owner text,
  lease_expires_at timestamptz,
  last_attempt_at timestamptz,
  last_response_status integer,
  last_error text,
  created_at timestamptz NOT NULL,
  completed_at timestamptz
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (endpoint_id, ordering_key, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_completed ON webhook_deliveries (completed_at) WHERE status <> 'pending';
`,
};
