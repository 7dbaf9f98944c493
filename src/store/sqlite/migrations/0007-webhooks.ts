import type { Migration } from '../../migration.js';

/*
 * Webhooks (docs/api.md#webhooks). webhook_endpoints: where a workspace's events go, the signing secret (and,
 * for a day after a rotation, the one it replaced) as keyring ciphertexts. webhook_events is the
 * outbox: written by a change's own transaction, only when an endpoint wants the event, with one
 * webhook_deliveries row per such endpoint. Only the first unfinished delivery of an endpoint and
 * ordering key has a next_attempt_at; the ones behind it wait with NULL until it finishes, so the
 * claim's walk of the due index meets one row per key however long a dead endpoint's queue grows.
 * A delivery is claimed by setting its lease; the partial indexes keep the claim's walk to due rows,
 * and to one endpoint's key for the order check.
 */
export const webhooks: Migration = {
  version: 7,
  name: 'webhooks',
  kind: 'contract',
  sql: `
CREATE TABLE webhook_endpoints (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
  environment TEXT NOT NULL CHECK (environment IN ('Customer', 'Testing')),
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  description TEXT NOT NULL,
  enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  secret_ciphertext TEXT NOT NULL,
  previous_secret_ciphertext TEXT,
  previous_secret_expires_at TEXT,
  failing_since TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints(workspace_id, environment);
CREATE TABLE webhook_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  public_id TEXT NOT NULL UNIQUE,
  workspace_id INTEGER NOT NULL REFERENCES workspaces(id),
  environment TEXT,
  type TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX webhook_events_created ON webhook_events(created_at);
CREATE TABLE webhook_deliveries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id INTEGER NOT NULL REFERENCES webhook_events(id),
  endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  ordering_key TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  lease_owner TEXT,
  lease_expires_at TEXT,
  last_attempt_at TEXT,
  last_response_status INTEGER,
  last_error TEXT,
  created_at TEXT NOT NULL,
  completed_at TEXT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_order ON webhook_deliveries(endpoint_id, ordering_key, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries(endpoint_id, id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_id);
CREATE INDEX webhook_deliveries_completed ON webhook_deliveries(completed_at) WHERE status <> 'pending';
`,
};
