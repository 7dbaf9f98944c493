import type { Database } from 'better-sqlite3';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type {
  ClaimedWebhookDelivery,
  NewWebhookEndpoint,
  WebhookEndpointPatch,
  WebhookEventFilter,
} from '../../domain/webhook-endpoints/webhook.records.js';
import type { Tenant } from '../../domain/tenancy.js';
import type { AuditEntry } from '../../domain/audit/audit-entry.js';
import { patchParameters } from '../user-group-records.js';
import type {
  WebhookAttempt,
  WebhookClaim,
  WebhookDeliveryQuery,
  WebhookStore,
} from '../../domain/webhook-endpoints/webhooks.port.js';
import {
  attemptFollowUp,
  assertEndpointRoom,
  assertRetryable,
  deliveryRetried,
  endpointCreated,
  endpointDeleted,
  endpointDisabled,
  endpointUpdated,
  secretRotated,
} from '../../domain/webhook-endpoints/webhook-endpoints.rules.js';
import {
  announcedEvents,
  attemptColumns,
  endpointWants,
  firstInLine,
  PROMOTE_NEXT,
  WEBHOOK_DELIVERY_COLUMNS,
  WEBHOOK_ENDPOINT_COLUMNS,
  webhookDeliveryFromRow,
  webhookEndpointFromRow,
  webhookEventFromRow,
} from '../webhook-outbox.js';
import type { WebhookDeliveryRow, WebhookEndpointRow, WebhookEventRow } from '../webhook-outbox.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './busy-retry.js';
import { preparedOnFirstUse } from './prepared.js';

/** webhook_endpoints as SQLite returns it: events as JSON text, enabled as 0 or 1. */
type SqliteEndpointRow = Omit<WebhookEndpointRow, 'events' | 'enabled'> & { events: string; enabled: number };

const toEndpoint = (row: SqliteEndpointRow) =>
  webhookEndpointFromRow({
    ...row,
    events: JSON.parse(row.events) as WebhookEventFilter[],
    enabled: row.enabled === 1,
  });

const endpointOrNull = (row: unknown) => (row === undefined ? null : toEndpoint(row as SqliteEndpointRow));

/** The outbox half of every audited write: called inside the change's transaction, after its audit events. */
export function sqliteOutbox(db: Database) {
  const sql = preparedOnFirstUse(db, {
    wanting: `SELECT id FROM webhook_endpoints
      WHERE workspace_id = @workspaceId AND enabled = 1 AND (@environment IS NULL OR environment = @environment)
        AND ${endpointWants.sqlite('events', '@type')}
      ORDER BY id`,
    insertEvent: `INSERT INTO webhook_events (public_id, workspace_id, environment, type, body, created_at)
      VALUES (@publicId, @workspaceId, @environment, @type, @body, @at) RETURNING id`,
    insertDelivery: `INSERT INTO webhook_deliveries (event_id, endpoint_id, ordering_key, status, next_attempt_at, created_at)
      VALUES (@eventId, @endpointId, @orderingKey, 'pending', ${firstInLine('@endpointId', '@orderingKey', '@at')}, @at)`,
  });
  return (entries: AuditEntry[], at: string, syncId?: string): void => {
    for (const event of announcedEvents(entries, syncId)) {
      const endpoints = sql.wanting.all(event) as Array<{ id: number }>;
      if (endpoints.length === 0) continue;
      const { id } = sql.insertEvent.get({ ...event, body: event.body(), at }) as { id: number };
      for (const endpoint of endpoints)
        sql.insertDelivery.run({ eventId: id, endpointId: endpoint.id, orderingKey: event.orderingKey, at });
    }
  };
}

const ENDPOINT_OF_TENANT = 'workspace_id = @workspaceId AND environment = @environment AND id = @id';

export function webhookMethods(db: Database, audit: AuditEvents): Synchronous<WebhookStore> {
  const sql = preparedOnFirstUse(db, {
    insert: `INSERT INTO webhook_endpoints (workspace_id, environment, url, events, description, enabled, secret_ciphertext, created_at, updated_at)
      VALUES (@workspaceId, @environment, @url, @events, @description, 1, @secretCiphertext, @createdAt, @createdAt)
      RETURNING ${WEBHOOK_ENDPOINT_COLUMNS}`,
    list: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE workspace_id = @workspaceId AND environment = @environment ORDER BY id`,
    find: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE ${ENDPOINT_OF_TENANT}`,
    byIds: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id IN (SELECT value FROM json_each(?))`,
    update: `UPDATE webhook_endpoints SET
        url = CASE WHEN @setUrl THEN @url ELSE url END,
        events = CASE WHEN @setEvents THEN @events ELSE events END,
        description = CASE WHEN @setDescription THEN @description ELSE description END,
        enabled = CASE WHEN @setEnabled THEN @enabled ELSE enabled END,
        failing_since = CASE WHEN @setEnabled AND @enabled = 1 THEN NULL ELSE failing_since END,
        updated_at = @at
      WHERE ${ENDPOINT_OF_TENANT} RETURNING ${WEBHOOK_ENDPOINT_COLUMNS}`,
    rotate: `UPDATE webhook_endpoints SET previous_secret_ciphertext = secret_ciphertext, previous_secret_expires_at = @expiresAt,
        secret_ciphertext = @secretCiphertext, updated_at = @at
      WHERE ${ENDPOINT_OF_TENANT} RETURNING ${WEBHOOK_ENDPOINT_COLUMNS}`,
    delete: `DELETE FROM webhook_endpoints WHERE ${ENDPOINT_OF_TENANT}`,
    count:
      'SELECT count(*) AS n FROM webhook_endpoints WHERE workspace_id = @workspaceId AND environment = @environment',
    listDeliveries: `SELECT ${WEBHOOK_DELIVERY_COLUMNS}
      FROM webhook_deliveries d JOIN webhook_events v ON v.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE w.workspace_id = @workspaceId AND w.environment = @environment
        AND (@endpointId IS NULL OR d.endpoint_id = @endpointId) AND (@status IS NULL OR d.status = @status) AND d.id < @beforeId
      ORDER BY d.id DESC LIMIT @limit`,
    delivery: `SELECT ${WEBHOOK_DELIVERY_COLUMNS}
      FROM webhook_deliveries d JOIN webhook_events v ON v.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE w.workspace_id = @workspaceId AND w.environment = @environment AND d.id = @id`,
    retry: `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = @at, completed_at = NULL WHERE id = @id`,
    // Due, not leased, of an enabled endpoint this worker is not saturating, and the first unfinished
    // one of its endpoint and key: the walk follows webhook_deliveries_due, the order check
    // webhook_deliveries_order.
    due: `SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= @now AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= @now)
        AND w.enabled = 1 AND d.endpoint_id NOT IN (SELECT value FROM json_each(@skip))
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id AND p.ordering_key = d.ordering_key
          AND p.status = 'pending' AND p.id < d.id)
      ORDER BY d.next_attempt_at, d.id LIMIT @limit`,
    lease: `UPDATE webhook_deliveries SET lease_owner = @owner, lease_expires_at = @leaseUntil
      WHERE id IN (SELECT value FROM json_each(@ids)) RETURNING id, event_id, endpoint_id, attempts, created_at`,
    events: `SELECT v.id, v.public_id, v.workspace_id, v.environment, v.type, v.body, v.created_at, ws.name AS workspace_name
      FROM webhook_events v JOIN workspaces ws ON ws.id = v.workspace_id WHERE v.id IN (SELECT value FROM json_each(?))`,
    recordAttempt: `UPDATE webhook_deliveries SET status = @status, attempts = attempts + 1,
        next_attempt_at = coalesce(@nextAttemptAt, next_attempt_at), lease_owner = NULL, lease_expires_at = NULL,
        last_attempt_at = @at, last_response_status = @responseStatus, last_error = @error, completed_at = @completedAt
      WHERE id = @deliveryId AND lease_owner = @owner RETURNING endpoint_id, ordering_key`,
    promoteNext: PROMOTE_NEXT,
    succeeded: 'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL',
    failed: 'UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, ?) WHERE id = ?',
    disable: `UPDATE webhook_endpoints SET enabled = 0, updated_at = @at
      WHERE id = @id AND enabled = 1 AND failing_since <= @since RETURNING ${WEBHOOK_ENDPOINT_COLUMNS}`,
    purgeDeliveries: `DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries
      WHERE status <> 'pending' AND completed_at < ? LIMIT ?)`,
    purgeEvents: `DELETE FROM webhook_events WHERE id IN (SELECT v.id FROM webhook_events v
      WHERE v.created_at < ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = v.id) LIMIT ?)`,
    backlog: `SELECT count(*) AS pending, min(d.created_at) AS oldest FROM webhook_deliveries d
      JOIN webhook_endpoints w ON w.id = d.endpoint_id WHERE d.status = 'pending' AND w.enabled = 1`,
  });

  const find = (tenant: Tenant, id: number) => endpointOrNull(sql.find.get({ ...tenant, id }));

  const insert = audit.withAudit((_context: AuditContext, endpoint: NewWebhookEndpoint) => {
    // Counted under the write lock: two creations cannot both take the last place.
    assertEndpointRoom(
      (sql.count.get({ workspaceId: endpoint.workspaceId, environment: endpoint.environment }) as { n: number }).n,
    );
    const created = toEndpoint(
      sql.insert.get({ ...endpoint, events: JSON.stringify(endpoint.events) }) as SqliteEndpointRow,
    );
    return { result: created, entries: [endpointCreated(created)] };
  });

  const update = audit.withAudit((context: AuditContext, tenant: Tenant, id: number, patch: WebhookEndpointPatch) => {
    const before = find(tenant, id);
    if (!before) return { result: null, entries: [] };
    const columns = {
      ...patch,
      events: patch.events && JSON.stringify(patch.events),
      enabled: patch.enabled === undefined ? undefined : Number(patch.enabled),
    };
    const after = toEndpoint(
      sql.update.get({
        ...tenant,
        id,
        at: context.at,
        ...patchParameters(['url', 'events', 'description', 'enabled'], columns),
      }) as SqliteEndpointRow,
    );
    return { result: after, entries: endpointUpdated(before, after) };
  });

  const rotate = audit.withAudit(
    (context: AuditContext, tenant: Tenant, id: number, secretCiphertext: string, expiresAt: string) => {
      const rotated = endpointOrNull(sql.rotate.get({ ...tenant, id, secretCiphertext, expiresAt, at: context.at }));
      return { result: rotated, entries: secretRotated(rotated) };
    },
  );

  const remove = audit.withAudit((_context: AuditContext, tenant: Tenant, id: number) => {
    const before = find(tenant, id);
    if (before) sql.delete.run({ ...tenant, id });
    return { result: before, entries: endpointDeleted(before) };
  });

  const retry = audit.withAudit((context: AuditContext, tenant: Tenant, id: number) => {
    const before = sql.delivery.get({ ...tenant, id }) as WebhookDeliveryRow | undefined;
    if (!before) return { result: null, entries: [] };
    assertRetryable(webhookDeliveryFromRow(before));
    sql.retry.run({ id, at: context.at });
    const after = webhookDeliveryFromRow(sql.delivery.get({ ...tenant, id }) as WebhookDeliveryRow);
    return { result: after, entries: [deliveryRetried(webhookDeliveryFromRow(before), tenant)] };
  });

  const claim = db.transaction((request: WebhookClaim): ClaimedWebhookDelivery[] => {
    const ids = (
      sql.due.all({ ...request, skip: JSON.stringify(request.skipEndpointIds) }) as Array<{ id: number }>
    ).map((row) => row.id);
    if (ids.length === 0) return [];
    const leased = sql.lease.all({
      owner: request.owner,
      leaseUntil: request.leaseUntil,
      ids: JSON.stringify(ids),
    }) as Array<{
      id: number;
      event_id: number;
      endpoint_id: number;
      attempts: number;
      created_at: string;
    }>;
    const events = new Map(
      (
        sql.events.all(JSON.stringify(leased.map((row) => row.event_id))) as Array<
          WebhookEventRow & { id: number; workspace_name: string }
        >
      ).map((row) => [row.id, row]),
    );
    const endpoints = new Map(
      (sql.byIds.all(JSON.stringify(leased.map((row) => row.endpoint_id))) as SqliteEndpointRow[]).map((row) => [
        row.id,
        toEndpoint(row),
      ]),
    );
    return leased
      .sort((a, b) => a.id - b.id)
      .map((row) => {
        const event = events.get(row.event_id)!;
        return {
          deliveryId: row.id,
          attempts: row.attempts,
          createdAt: row.created_at,
          endpoint: endpoints.get(row.endpoint_id)!,
          event: webhookEventFromRow(event),
          workspaceName: event.workspace_name,
        };
      });
  });

  const record = audit.withAudit((context: AuditContext, attempt: WebhookAttempt) => {
    const written = sql.recordAttempt.get({ ...attempt, ...attemptColumns(attempt) }) as
      { endpoint_id: number; ordering_key: string } | undefined;
    if (!written) return { result: false, entries: [] };
    const followUp = attemptFollowUp(attempt.outcome);
    if (followUp.promoteNext)
      sql.promoteNext.run({ at: attempt.at, endpointId: written.endpoint_id, orderingKey: written.ordering_key });
    if (followUp.endpointAnswered) {
      sql.succeeded.run(written.endpoint_id);
      return { result: true, entries: [] };
    }
    sql.failed.run(attempt.at, written.endpoint_id);
    const disabled = endpointOrNull(
      sql.disable.get({ id: written.endpoint_id, at: context.at, since: attempt.disableIfFailingSince }),
    );
    return { result: true, entries: endpointDisabled(disabled) };
  });

  const purge = db.transaction((before: string, limit: number): number => {
    const deleted = sql.purgeDeliveries.run(before, limit).changes;
    sql.purgeEvents.run(before, limit);
    return deleted;
  });

  return {
    insertWebhookEndpoint: (endpoint, context) => insert(context, endpoint),
    listWebhookEndpoints: (tenant) => (sql.list.all({ ...tenant }) as SqliteEndpointRow[]).map(toEndpoint),
    findWebhookEndpoint: find,
    updateWebhookEndpoint: (tenant, id, patch, context) => update(context, tenant, id, patch),
    rotateWebhookSecret: (tenant, id, secretCiphertext, expiresAt, context) =>
      rotate(context, tenant, id, secretCiphertext, expiresAt),
    deleteWebhookEndpoint: (tenant, id, context) => remove(context, tenant, id),
    listWebhookDeliveries: (query: WebhookDeliveryQuery) =>
      (
        sql.listDeliveries.all({
          ...query,
          endpointId: query.endpointId ?? null,
          status: query.status ?? null,
          beforeId: query.beforeId ?? Number.MAX_SAFE_INTEGER,
        }) as WebhookDeliveryRow[]
      ).map(webhookDeliveryFromRow),
    retryWebhookDelivery: (tenant, id, context) => retry(context, tenant, id),
    // An idle worker polls several times a second: a plain read first, so that only a poll that finds
    // work takes the write lock the request path's writes need.
    claimWebhookDeliveries: (request) =>
      sql.due.get({ ...request, limit: 1, skip: JSON.stringify(request.skipEndpointIds) })
        ? claim.immediate(request)
        : [],
    recordWebhookAttempt: (attempt) => record({ at: attempt.at, actor: { type: 'cli' }, requestId: null }, attempt),
    purgeWebhookHistory: (before, limit) => purge.immediate(before, limit),
    webhookBacklog: () => {
      const row = sql.backlog.get() as { pending: number; oldest: string | null };
      return { pending: row.pending, oldestPendingCreatedAt: row.oldest };
    },
  };
}
