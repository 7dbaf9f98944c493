import type { AuditContext } from '../../domain/audit/audit.records.js';
import type {
  ClaimedWebhookDelivery,
  NewWebhookEndpoint,
  WebhookEndpointPatch,
  WebhookEventFilter,
} from '../../domain/webhook-endpoints/webhook.records.js';
import type { Tenant } from '../../domain/tenancy.js';
import { patchParameters } from '../user-group-records.js';
import type {
  WebhookAttempt,
  WebhookClaim,
  WebhookDeliveryQuery,
  WebhookStore,
} from '../../domain/webhook-endpoints/webhooks.port.js';
import {
  assertEndpointRoom,
  assertRetryable,
  attemptFollowUp,
  deliveryRetried,
  endpointCreated,
  endpointDeleted,
  endpointDisabled,
  endpointUpdated,
  secretRotated,
} from '../../domain/webhook-endpoints/webhook-endpoints.rules.js';
import {
  attemptColumns,
  PROMOTE_NEXT,
  WEBHOOK_DELIVERY_COLUMNS,
  WEBHOOK_ENDPOINT_COLUMNS,
  webhookDeliveryFromRow,
  webhookEndpointFromRow,
  webhookEventFromRow,
} from '../webhook-outbox.js';
import type { WebhookDeliveryRow, WebhookEndpointRow, WebhookEventRow } from '../webhook-outbox.js';
import type { AuditEvents } from './audit-events.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';
import { iso, nullableIso, onlyRow, toNumber } from './rows.js';
import type { Int8 } from './rows.js';
import { statements } from './statements.js';

/** webhook_endpoints as node-postgres returns it: bigints as strings, timestamps as Dates. */
type PostgresEndpointRow = Omit<
  WebhookEndpointRow,
  'id' | 'workspace_id' | 'previous_secret_expires_at' | 'failing_since' | 'created_at' | 'updated_at'
> & {
  id: Int8;
  workspace_id: Int8;
  previous_secret_expires_at: Date | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
};

const toEndpoint = (row: PostgresEndpointRow) =>
  webhookEndpointFromRow({
    ...row,
    id: toNumber(row.id),
    workspace_id: toNumber(row.workspace_id),
    events: row.events as WebhookEventFilter[],
    previous_secret_expires_at: nullableIso(row.previous_secret_expires_at),
    failing_since: nullableIso(row.failing_since),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  });

type PostgresDeliveryRow = Omit<
  WebhookDeliveryRow,
  'id' | 'endpoint_id' | 'next_attempt_at' | 'last_attempt_at' | 'created_at' | 'completed_at'
> & {
  id: Int8;
  endpoint_id: Int8;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  created_at: Date;
  completed_at: Date | null;
};

const toDelivery = (row: PostgresDeliveryRow) =>
  webhookDeliveryFromRow({
    ...row,
    id: toNumber(row.id),
    endpoint_id: toNumber(row.endpoint_id),
    next_attempt_at: nullableIso(row.next_attempt_at),
    last_attempt_at: nullableIso(row.last_attempt_at),
    created_at: iso(row.created_at),
    completed_at: nullableIso(row.completed_at),
  });

const DELIVERIES_OF_TENANT = `webhook_deliveries d JOIN webhook_events v ON v.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
  WHERE w.workspace_id = @workspaceId AND w.environment = @environment`;

const ENDPOINT_OF_TENANT = 'workspace_id = @workspaceId AND environment = @environment AND id = @id';

const sql = statements({
  insert: `INSERT INTO webhook_endpoints (workspace_id, environment, url, events, description, enabled, secret_ciphertext, created_at, updated_at)
    VALUES (@workspaceId, @environment, @url, @events::text[], @description, true, @secretCiphertext, @createdAt, @createdAt)
    RETURNING ${WEBHOOK_ENDPOINT_COLUMNS}`,
  list: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE workspace_id = @workspaceId AND environment = @environment ORDER BY id`,
  // Every creation in an environment takes this lock before it counts, so two cannot both take the last place.
  lockEndpoints: `SELECT pg_advisory_xact_lock(hashtext('ugs.webhook_endpoints'), hashtext(@workspaceId::text || '.' || @environment))`,
  count:
    'SELECT count(*)::int AS n FROM webhook_endpoints WHERE workspace_id = @workspaceId AND environment = @environment',
  find: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE ${ENDPOINT_OF_TENANT}`,
  // FOR UPDATE: the audited before is the value the change replaces, whatever runs alongside.
  findForUpdate: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE ${ENDPOINT_OF_TENANT} FOR UPDATE`,
  byIds: `SELECT ${WEBHOOK_ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ANY(@ids::bigint[])`,
  update: `UPDATE webhook_endpoints SET
      url = CASE WHEN @setUrl::boolean THEN @url::text ELSE url END,
      events = CASE WHEN @setEvents::boolean THEN @events::text[] ELSE events END,
      description = CASE WHEN @setDescription::boolean THEN @description::text ELSE description END,
      enabled = CASE WHEN @setEnabled::boolean THEN @enabled::boolean ELSE enabled END,
      failing_since = CASE WHEN @setEnabled::boolean AND @enabled::boolean THEN NULL ELSE failing_since END,
      updated_at = @at
    WHERE ${ENDPOINT_OF_TENANT} RETURNING ${WEBHOOK_ENDPOINT_COLUMNS}`,
  rotate: `UPDATE webhook_endpoints SET previous_secret_ciphertext = secret_ciphertext, previous_secret_expires_at = @expiresAt,
      secret_ciphertext = @secretCiphertext, updated_at = @at
    WHERE ${ENDPOINT_OF_TENANT} RETURNING ${WEBHOOK_ENDPOINT_COLUMNS}`,
  delete: `DELETE FROM webhook_endpoints WHERE ${ENDPOINT_OF_TENANT}`,
  listDeliveries: `SELECT ${WEBHOOK_DELIVERY_COLUMNS} FROM ${DELIVERIES_OF_TENANT}
      AND (@endpointId::bigint IS NULL OR d.endpoint_id = @endpointId) AND (@status::text IS NULL OR d.status = @status) AND d.id < @beforeId
    ORDER BY d.id DESC LIMIT @limit`,
  deliveryForUpdate: `SELECT ${WEBHOOK_DELIVERY_COLUMNS} FROM ${DELIVERIES_OF_TENANT} AND d.id = @id FOR UPDATE OF d`,
  delivery: `SELECT ${WEBHOOK_DELIVERY_COLUMNS} FROM ${DELIVERIES_OF_TENANT} AND d.id = @id`,
  retry: `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = @at, completed_at = NULL WHERE id = @id`,
  // As SQLite's claim, plus SKIP LOCKED: a row another instance is claiming right now is passed over,
  // never waited for, and never taken twice (its lease is set once that claim commits).
  claim: `WITH due AS (
      SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= @now AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= @now)
        AND w.enabled AND NOT (d.endpoint_id = ANY(@skip::bigint[]))
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id AND p.ordering_key = d.ordering_key
          AND p.status = 'pending' AND p.id < d.id)
      ORDER BY d.next_attempt_at, d.id LIMIT @limit
      FOR UPDATE OF d SKIP LOCKED
    )
    UPDATE webhook_deliveries d SET lease_owner = @owner, lease_expires_at = @leaseUntil FROM due WHERE d.id = due.id
    RETURNING d.id, d.event_id, d.endpoint_id, d.attempts, d.created_at`,
  events: `SELECT v.id, v.public_id, v.workspace_id, v.environment, v.type, v.body, v.created_at, ws.name AS workspace_name
    FROM webhook_events v JOIN workspaces ws ON ws.id = v.workspace_id WHERE v.id = ANY(@ids::bigint[])`,
  recordAttempt: `UPDATE webhook_deliveries SET status = @status, attempts = attempts + 1,
      next_attempt_at = coalesce(@nextAttemptAt::timestamptz, next_attempt_at), lease_owner = NULL, lease_expires_at = NULL,
      last_attempt_at = @at, last_response_status = @responseStatus::integer, last_error = @error::text, completed_at = @completedAt::timestamptz
    WHERE id = @deliveryId AND lease_owner = @owner RETURNING endpoint_id, ordering_key`,
  promoteNext: PROMOTE_NEXT,
  succeeded: 'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = @id AND failing_since IS NOT NULL',
  failed: 'UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, @at) WHERE id = @id',
  disable: `UPDATE webhook_endpoints SET enabled = false, updated_at = @at
    WHERE id = @id AND enabled AND failing_since <= @since RETURNING ${WEBHOOK_ENDPOINT_COLUMNS}`,
  purgeDeliveries: `DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries
    WHERE status <> 'pending' AND completed_at < @before LIMIT @limit) RETURNING id`,
  purgeEvents: `DELETE FROM webhook_events WHERE id IN (SELECT v.id FROM webhook_events v
    WHERE v.created_at < @before AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = v.id) LIMIT @limit)`,
  backlog: `SELECT count(*) AS pending, min(d.created_at) AS oldest FROM webhook_deliveries d
    JOIN webhook_endpoints w ON w.id = d.endpoint_id WHERE d.status = 'pending' AND w.enabled`,
});

export function webhookMethods(db: PostgresDatabase, audit: AuditEvents): WebhookStore {
  const findOne = async (q: Queryable, statement: ReturnType<(typeof sql)['find']>) => {
    const [row] = await q.rows<PostgresEndpointRow>(statement);
    return row ? toEndpoint(row) : null;
  };

  const insert = audit.withAudit(async (tx, _context: AuditContext, endpoint: NewWebhookEndpoint) => {
    const tenant = { workspaceId: endpoint.workspaceId, environment: endpoint.environment };
    await tx.rows(sql.lockEndpoints(tenant));
    assertEndpointRoom(onlyRow(await tx.rows<{ n: number }>(sql.count(tenant)), 'webhook endpoint count').n);
    const created = toEndpoint(
      onlyRow(await tx.rows<PostgresEndpointRow>(sql.insert({ ...endpoint })), 'webhook endpoint insert'),
    );
    return { result: created, entries: [endpointCreated(created)] };
  });

  const update = audit.withAudit(
    async (tx, context: AuditContext, tenant: Tenant, id: number, patch: WebhookEndpointPatch) => {
      const before = await findOne(tx, sql.findForUpdate({ ...tenant, id }));
      if (!before) return { result: null, entries: [] };
      const after = toEndpoint(
        onlyRow(
          await tx.rows<PostgresEndpointRow>(
            sql.update({
              ...tenant,
              id,
              at: context.at,
              ...patchParameters(['url', 'events', 'description', 'enabled'], patch),
            }),
          ),
          'webhook endpoint update',
        ),
      );
      return { result: after, entries: endpointUpdated(before, after) };
    },
  );

  const rotate = audit.withAudit(
    async (tx, context: AuditContext, tenant: Tenant, id: number, secretCiphertext: string, expiresAt: string) => {
      const rotated = await findOne(tx, sql.rotate({ ...tenant, id, secretCiphertext, expiresAt, at: context.at }));
      return { result: rotated, entries: secretRotated(rotated) };
    },
  );

  const remove = audit.withAudit(async (tx, _context: AuditContext, tenant: Tenant, id: number) => {
    const before = await findOne(tx, sql.findForUpdate({ ...tenant, id }));
    if (before) await tx.rows(sql.delete({ ...tenant, id }));
    return { result: before, entries: endpointDeleted(before) };
  });

  const retry = audit.withAudit(async (tx, context: AuditContext, tenant: Tenant, id: number) => {
    const [before] = await tx.rows<PostgresDeliveryRow>(sql.deliveryForUpdate({ ...tenant, id }));
    if (!before) return { result: null, entries: [] };
    assertRetryable(toDelivery(before));
    await tx.rows(sql.retry({ id, at: context.at }));
    const after = toDelivery(
      onlyRow(await tx.rows<PostgresDeliveryRow>(sql.delivery({ ...tenant, id })), 'webhook delivery'),
    );
    return { result: after, entries: [deliveryRetried(toDelivery(before), tenant)] };
  });

  const claim = async (request: WebhookClaim): Promise<ClaimedWebhookDelivery[]> => {
    const leased = await db.rows<{ id: Int8; event_id: Int8; endpoint_id: Int8; attempts: number; created_at: Date }>(
      sql.claim({ ...request, skip: request.skipEndpointIds }),
    );
    if (leased.length === 0) return [];
    const [events, endpoints] = await Promise.all([
      db.rows<
        Omit<WebhookEventRow, 'workspace_id' | 'created_at'> & {
          id: Int8;
          workspace_id: Int8;
          created_at: Date;
          workspace_name: string;
        }
      >(sql.events({ ids: leased.map((row) => row.event_id) })),
      db.rows<PostgresEndpointRow>(sql.byIds({ ids: leased.map((row) => row.endpoint_id) })),
    ]);
    const eventById = new Map(events.map((row) => [toNumber(row.id), row]));
    const endpointById = new Map(endpoints.map((row) => [toNumber(row.id), toEndpoint(row)]));
    return leased
      .map((row) => {
        const event = eventById.get(toNumber(row.event_id))!;
        return {
          deliveryId: toNumber(row.id),
          attempts: row.attempts,
          createdAt: iso(row.created_at),
          endpoint: endpointById.get(toNumber(row.endpoint_id))!,
          event: webhookEventFromRow({
            ...event,
            workspace_id: toNumber(event.workspace_id),
            created_at: iso(event.created_at),
          }),
          workspaceName: event.workspace_name,
        };
      })
      .sort((a, b) => a.deliveryId - b.deliveryId);
  };

  const record = audit.withAudit(async (tx, context: AuditContext, attempt: WebhookAttempt) => {
    const [written] = await tx.rows<{ endpoint_id: Int8; ordering_key: string }>(
      sql.recordAttempt({ ...attempt, ...attemptColumns(attempt) }),
    );
    if (!written) return { result: false, entries: [] };
    const id = written.endpoint_id;
    const followUp = attemptFollowUp(attempt.outcome);
    if (followUp.promoteNext)
      await tx.rows(sql.promoteNext({ at: attempt.at, endpointId: id, orderingKey: written.ordering_key }));
    if (followUp.endpointAnswered) {
      await tx.rows(sql.succeeded({ id }));
      return { result: true, entries: [] };
    }
    await tx.rows(sql.failed({ id, at: attempt.at }));
    const disabled = await findOne(tx, sql.disable({ id, at: context.at, since: attempt.disableIfFailingSince }));
    return { result: true, entries: endpointDisabled(disabled) };
  });

  return {
    insertWebhookEndpoint: (endpoint, context) => insert(context, endpoint),
    listWebhookEndpoints: async (tenant) =>
      (await db.rows<PostgresEndpointRow>(sql.list({ ...tenant }))).map(toEndpoint),
    findWebhookEndpoint: (tenant, id) => findOne(db, sql.find({ ...tenant, id })),
    updateWebhookEndpoint: (tenant, id, patch, context) => update(context, tenant, id, patch),
    rotateWebhookSecret: (tenant, id, secretCiphertext, expiresAt, context) =>
      rotate(context, tenant, id, secretCiphertext, expiresAt),
    deleteWebhookEndpoint: (tenant, id, context) => remove(context, tenant, id),
    listWebhookDeliveries: async (query: WebhookDeliveryQuery) =>
      (
        await db.rows<PostgresDeliveryRow>(
          sql.listDeliveries({
            ...query,
            endpointId: query.endpointId ?? null,
            status: query.status ?? null,
            beforeId: query.beforeId ?? Number.MAX_SAFE_INTEGER,
          }),
        )
      ).map(toDelivery),
    retryWebhookDelivery: (tenant, id, context) => retry(context, tenant, id),
    claimWebhookDeliveries: claim,
    recordWebhookAttempt: (attempt) => record({ at: attempt.at, actor: { type: 'cli' }, requestId: null }, attempt),
    purgeWebhookHistory: (before, limit) =>
      db.transaction(async (tx) => {
        const deleted = await tx.rows(sql.purgeDeliveries({ before, limit }));
        await tx.rows(sql.purgeEvents({ before, limit }));
        return deleted.length;
      }),
    webhookBacklog: async () => {
      const [row] = await db.rows<{ pending: Int8; oldest: Date | null }>(sql.backlog());
      return { pending: toNumber(row?.pending ?? 0), oldestPendingCreatedAt: nullableIso(row?.oldest ?? null) };
    },
  };
}
