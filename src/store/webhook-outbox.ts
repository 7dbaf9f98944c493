import { randomBytes } from 'node:crypto';
import { WEBHOOK_EVENT_TYPES } from '../wire/contract.constants.js';
import type { FieldChanges } from '../domain/audit/audit.records.js';
import type {
  WebhookDeliveryRecord,
  WebhookDeliveryStatus,
  WebhookEndpointRecord,
  WebhookEventFilter,
  WebhookEventRecord,
  WebhookEventType,
  WebhookSubject,
} from '../domain/webhook-endpoints/webhook.records.js';
import type { Environment } from '../domain/tenancy.js';
import type { AuditEntry } from '../domain/audit/audit-entry.js';

/*
 * The outbox (docs/api.md#webhooks), engine-neutral: which audited changes announce an event, what the event
 * records, and how both engines' rows read back. An event is written by the change's own transaction,
 * beside its audit event, and only when an enabled endpoint of its workspace wants it, together
 * with one delivery per such endpoint.
 */

const ANNOUNCED: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);

/** The filter an endpoint lists to want every event type (WebhookEventFilter). */
const EVERY_EVENT: WebhookEventFilter = '*';

/**
 * "An endpoint wants this event", the one definition per engine: the SQL condition that the endpoint's
 * filter (`events`, an SQL expression: its column) lists the event's `type` (an SQL expression or a
 * parameter) or every event. PostgreSQL holds the filter as text[], SQLite as a JSON array. Every
 * statement that matches endpoints to events states it through these, so that no two can drift.
 */
export const endpointWants = {
  postgres: (events: string, type: string) => `${events} && ARRAY[${type}, '${EVERY_EVENT}']`,
  sqlite: (events: string, type: string) =>
    `EXISTS (SELECT 1 FROM json_each(${events}) WHERE value IN (${type}, '${EVERY_EVENT}'))`,
} as const;

/** One event to write, with everything the engines' statements bind. */
export interface OutboxEvent {
  publicId: string;
  type: WebhookEventType;
  workspaceId: number;
  environment: Environment | null;
  /** Deliveries of one key reach an endpoint in order: one group, one API token, one workspace's keys. */
  orderingKey: string;
  /** Read lazily: only an event some endpoint wants is written. */
  body: () => string;
}

/** `evt_` and 24 random hex digits: unique, and the receiver's key for telling duplicates apart. */
function newEventId(): string {
  return `evt_${randomBytes(12).toString('hex')}`;
}

function orderingKeyOf(entry: AuditEntry, subject: WebhookSubject): string {
  switch (subject.kind) {
    case 'user_group':
      return `user_group:${subject.userGroup.teamId}`;
    case 'api_token':
      return `api_token:${subject.apiToken.id}`;
    case 'signing_key':
      return `signing_key:${entry.workspaceId}`;
  }
}

/** The events the audit entries of one change announce, in their order. */
export function announcedEvents(entries: AuditEntry[], syncId?: string): OutboxEvent[] {
  return entries.flatMap((entry) => {
    const { subject } = entry;
    if (!subject || !ANNOUNCED.has(entry.action)) return [];
    let read: WebhookSubject | undefined;
    const once = () => (read ??= subject());
    return [
      {
        publicId: newEventId(),
        type: entry.action as WebhookEventType,
        workspaceId: entry.workspaceId,
        environment: entry.environment,
        get orderingKey() {
          return orderingKeyOf(entry, once());
        },
        body: () => JSON.stringify({ subject: once(), changes: entry.changes, ...(syncId ? { syncId } : {}) }),
      },
    ];
  });
}

/** webhook_events as both engines decode it: `body` is the JSON text the outbox wrote. */
export interface WebhookEventRow {
  public_id: string;
  type: WebhookEventType;
  workspace_id: number;
  environment: Environment | null;
  body: string;
  created_at: string;
}

export function webhookEventFromRow(row: WebhookEventRow): WebhookEventRecord {
  const { subject, changes, syncId } = JSON.parse(row.body) as {
    subject: WebhookSubject;
    changes: FieldChanges | null;
    syncId?: string;
  };
  return {
    id: row.public_id,
    type: row.type,
    workspaceId: row.workspace_id,
    environment: row.environment,
    subject,
    changes,
    ...(syncId === undefined ? {} : { syncId }),
    createdAt: row.created_at,
  };
}

/** webhook_endpoints once the engine has decoded its own types (booleans, arrays, timestamps). */
export interface WebhookEndpointRow {
  id: number;
  workspace_id: number;
  environment: Environment;
  url: string;
  events: WebhookEventFilter[];
  description: string;
  enabled: boolean;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: string | null;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

export const WEBHOOK_ENDPOINT_COLUMNS = `id, workspace_id, environment, url, events, description, enabled, secret_ciphertext,
  previous_secret_ciphertext, previous_secret_expires_at, failing_since, created_at, updated_at`;

export function webhookEndpointFromRow(row: WebhookEndpointRow): WebhookEndpointRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    environment: row.environment,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    secretCiphertext: row.secret_ciphertext,
    previousSecretCiphertext: row.previous_secret_ciphertext,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    failingSince: row.failing_since,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** webhook_deliveries joined with its event's id and type, decoded. */
export interface WebhookDeliveryRow {
  id: number;
  endpoint_id: number;
  event_id: string;
  event_type: WebhookEventType;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_response_status: number | null;
  last_error: string | null;
  created_at: string;
  completed_at: string | null;
}

export function webhookDeliveryFromRow(row: WebhookDeliveryRow): WebhookDeliveryRecord {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
    lastAttemptAt: row.last_attempt_at,
    lastResponseStatus: row.last_response_status,
    lastError: row.last_error,
    createdAt: row.created_at,
    completedAt: row.completed_at,
  };
}

/**
 * The first attempt time of a new delivery: `at`, unless an unfinished delivery of the same endpoint
 * and key is ahead of it; then NULL, waiting in line (not due, so the claim's walk never meets it)
 * until PROMOTE_NEXT makes it due. `lock` is PostgreSQL's `FOR SHARE`: a delivery ahead that is being
 * finished right now is waited for and looked at again, so a new delivery never waits behind one whose
 * promotion has already run (SQLite's one writer cannot interleave them).
 */
export const firstInLine = (
  endpointId: string,
  orderingKey: string,
  at: string,
  lock = '',
) => `CASE WHEN EXISTS (SELECT 1 FROM webhook_deliveries p
    WHERE p.endpoint_id = ${endpointId} AND p.ordering_key = ${orderingKey} AND p.status = 'pending' ${lock}) THEN NULL ELSE ${at} END`;

/** Once a delivery is delivered or failed: the next one of its endpoint and key, if waiting, is due at @at. */
export const PROMOTE_NEXT = `UPDATE webhook_deliveries SET next_attempt_at = @at
  WHERE id = (SELECT min(id) FROM webhook_deliveries WHERE endpoint_id = @endpointId AND ordering_key = @orderingKey AND status = 'pending')
    AND next_attempt_at IS NULL`;

/** The delivery columns both engines select, with the event's public id and type. */
export const WEBHOOK_DELIVERY_COLUMNS = `d.id, d.endpoint_id, v.public_id AS event_id, v.type AS event_type, d.status, d.attempts,
  d.next_attempt_at, d.last_attempt_at, d.last_response_status, d.last_error, d.created_at, d.completed_at`;

/** Attempt outcomes as the delivery row records them. */
export function attemptColumns(attempt: {
  outcome: 'delivered' | 'retry' | 'failed';
  nextAttemptAt?: string;
  at: string;
}) {
  return {
    status: attempt.outcome === 'retry' ? 'pending' : attempt.outcome,
    nextAttemptAt: attempt.outcome === 'retry' ? (attempt.nextAttemptAt ?? attempt.at) : null,
    completedAt: attempt.outcome === 'retry' ? null : attempt.at,
    failed: attempt.outcome === 'delivered' ? 0 : 1,
  };
}
