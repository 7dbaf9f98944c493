import type { AuditContext, AuditEventRecord } from '../../domain/audit/audit.records.js';
import type { GroupAudit } from '../../domain/user-groups/user-groups.rules.js';
import { actorColumns, auditEventFromRow, auditQueryParameters, serializeChanges } from '../audit-rows.js';
import type { AuditEventRow } from '../audit-rows.js';
import type { AuditEntry, Audited } from '../../domain/audit/audit-entry.js';
import { announcedEvents, endpointWants, firstInLine } from '../webhook-outbox.js';
import type { AuditEventQuery } from '../../domain/audit/audit.port.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';
import { iso, nullableNumber, toNumber } from './rows.js';
import type { Int8 } from './rows.js';
import { statements } from './statements.js';

/** audit_events as node-postgres returns it: bigints as strings, timestamps as Dates, JSON parsed. */
type PostgresAuditRow = Omit<AuditEventRow, 'id' | 'at' | 'workspace_id' | 'actor_api_token_id' | 'team_id'> & {
  id: Int8;
  at: Date;
  workspace_id: Int8;
  actor_api_token_id: Int8 | null;
  team_id: Int8 | null;
};

function toAuditEvent(row: PostgresAuditRow): AuditEventRecord {
  return auditEventFromRow({
    ...row,
    id: toNumber(row.id),
    at: iso(row.at),
    workspace_id: toNumber(row.workspace_id),
    actor_api_token_id: nullableNumber(row.actor_api_token_id),
    team_id: nullableNumber(row.team_id),
  });
}

/**
 * For a change made in one statement: a CTE that writes one audit event per row of `source` (a CTE
 * returning workspace_id, environment, team_id and provided_id), committing with the change itself.
 * Its parameters (@action and @changes among them) come from `auditParameters`, given the same
 * `GroupAudit` the transaction paths turn into an entry.
 */
export const auditEventPerRow = (source: string) => `audited AS (
    INSERT INTO audit_events
      (at, workspace_id, environment, actor_type, actor_api_token_id, actor_name, actor_issuer, actor_subject, action, team_id,
      provided_id, changes, request_id)
    SELECT @at::timestamptz, s.workspace_id, s.environment, @actorType::text, @actorApiTokenId::bigint, @actorName::text,
      @actorIssuer::text, @actorSubject::text, @action::text, s.team_id, s.provided_id, @changes::json, @requestId::text
    FROM ${source} s
  )`;

/**
 * The same for a change of many rows made for several requests in one statement (docs/adr/0019-postgresql-group-writes.md): `source`
 * returns a `batch_index` beside the row's columns, and each row's audit event takes its request's
 * time, actor, changes and request id from the parallel arrays of `batchAuditParameters` at that index.
 */
export const auditEventPerBatchRow = (source: string) => `audited AS (
    INSERT INTO audit_events
      (at, workspace_id, environment, actor_type, actor_api_token_id, actor_name, actor_issuer, actor_subject, action, team_id,
      provided_id, changes, request_id)
    SELECT a.at, s.workspace_id, s.environment, a.actor_type, a.actor_api_token_id, a.actor_name, a.actor_issuer, a.actor_subject,
      @action::text, s.team_id, s.provided_id, a.changes, a.request_id
    FROM ${source} s
    JOIN unnest(@auditIndexes::int[], @ats::timestamptz[], @actorTypes::text[], @actorApiTokenIds::bigint[], @actorNames::text[],
      @actorIssuers::text[], @actorSubjects::text[], @changeSets::json[], @requestIds::text[])
      AS a(i, at, actor_type, actor_api_token_id, actor_name, actor_issuer, actor_subject, changes, request_id)
      ON a.i = s.batch_index
    ORDER BY a.i
  )`;

/**
 * True while no enabled endpoint of the tenant (@workspaceId, @environment) wants the event of the
 * change's @action (a group's audit action is its webhook event type): the condition under which a
 * one-statement change needs no outbox row. The outbox statement below matches endpoints the same way.
 * `noEndpointWants` states it for a tenant given as other expressions (a batch's row's columns).
 */
export const noEndpointWants = (
  workspaceId: string,
  environment: string,
) => `NOT EXISTS (SELECT 1 FROM webhook_endpoints w
    WHERE w.workspace_id = ${workspaceId} AND w.environment = ${environment} AND w.enabled AND ${endpointWants.postgres('w.events', '@action::text')})`;
export const NO_ENDPOINT_WANTS = noEndpointWants('@workspaceId', '@environment');

/** The parameters an audit event takes from its context: when, who, and in which request. */
function contextParameters(context: AuditContext) {
  return { at: context.at, ...actorColumns(context.actor), requestId: context.requestId };
}

export function auditParameters(context: AuditContext, audit: GroupAudit): Record<string, unknown> {
  return { ...contextParameters(context), action: audit.action, changes: serializeChanges(audit) };
}

/** The parameters of `auditEventPerBatchRow`: one audit of one action per request, in batch order. */
export function batchAuditParameters(contexts: AuditContext[], audits: GroupAudit[]): Record<string, unknown> {
  const actors = contexts.map((context) => actorColumns(context.actor));
  return {
    action: audits[0]?.action ?? null,
    auditIndexes: contexts.map((_, index) => index),
    ats: contexts.map((context) => context.at),
    actorTypes: actors.map((actor) => actor.actorType),
    actorApiTokenIds: actors.map((actor) => actor.actorApiTokenId),
    actorNames: actors.map((actor) => actor.actorName),
    actorIssuers: actors.map((actor) => actor.actorIssuer),
    actorSubjects: actors.map((actor) => actor.actorSubject),
    changeSets: audits.map(serializeChanges),
    requestIds: contexts.map((context) => context.requestId),
  };
}

// One statement for any number of entries: the per-entry columns travel as parallel arrays, and
// WITH ORDINALITY keeps the ids in the order the entries were made.
const INSERT_AUDIT_EVENTS = `INSERT INTO audit_events
      (at, workspace_id, environment, actor_type, actor_api_token_id, actor_name, actor_issuer, actor_subject, action, team_id,
      provided_id, changes, request_id, sync_id)
    SELECT @at::timestamptz, e.workspace_id, e.environment, @actorType::text, @actorApiTokenId::bigint, @actorName::text,
      @actorIssuer::text, @actorSubject::text, e.action, e.team_id, e.provided_id, e.changes, @requestId::text, @syncId::text
    FROM unnest(@workspaceIds::bigint[], @environments::text[], @actions::text[], @teamIds::bigint[], @providedIds::text[],
      @changes::json[]) WITH ORDINALITY AS e(workspace_id, environment, action, team_id, provided_id, changes, n)
    ORDER BY e.n`;

/** The audit trail, newest first from the cursor: `team` is its condition on the group. */
function auditList(team: string): string {
  return `SELECT id, at, workspace_id, environment, actor_type, actor_api_token_id, actor_name, actor_issuer, actor_subject, action,
      team_id, provided_id,
      changes, request_id, sync_id
    FROM audit_events
    WHERE workspace_id = @workspaceId
      AND (@environment::text IS NULL OR environment = @environment)
      AND ${team}
      AND (@action::text IS NULL OR action = @action)
      AND (@personSubject::text IS NULL OR (actor_subject = @personSubject AND actor_issuer = @personIssuer::text))
      AND (@since::timestamptz IS NULL OR at >= @since)
      AND (@until::timestamptz IS NULL OR at < @until)
      AND id < @beforeId
    ORDER BY id DESC LIMIT @limit`;
}

const sql = statements(
  {
    insert: INSERT_AUDIT_EVENTS,
    // The same, with the webhook events the entries announce (the outbox, docs/api.md#webhooks), in one statement:
    // an event is written only when an enabled endpoint of its workspace (and environment) wants its
    // type, with one delivery per such endpoint, in the order of the entries.
    insertAnnouncing: `WITH audited AS (${INSERT_AUDIT_EVENTS}),
    announced AS (
      SELECT * FROM unnest(@publicIds::text[], @types::text[], @eventWorkspaceIds::bigint[], @eventEnvironments::text[],
        @orderingKeys::text[], @bodies::text[]) WITH ORDINALITY AS a(public_id, type, workspace_id, environment, ordering_key, body, n)
    ), targets AS (
      SELECT a.n, w.id AS endpoint_id FROM announced a JOIN webhook_endpoints w ON w.workspace_id = a.workspace_id AND w.enabled
        AND (a.environment IS NULL OR w.environment = a.environment) AND ${endpointWants.postgres('w.events', 'a.type')}
    ), events AS (
      INSERT INTO webhook_events (public_id, workspace_id, environment, type, body, created_at)
      SELECT a.public_id, a.workspace_id, a.environment, a.type, a.body, @at::timestamptz FROM announced a
      WHERE a.n IN (SELECT n FROM targets) ORDER BY a.n
      RETURNING id, public_id
    )
    INSERT INTO webhook_deliveries (event_id, endpoint_id, ordering_key, status, next_attempt_at, created_at)
    SELECT v.id, t.endpoint_id, a.ordering_key, 'pending', ${firstInLine('t.endpoint_id', 'a.ordering_key', '@at::timestamptz', 'FOR SHARE')}, @at::timestamptz
    FROM events v JOIN announced a ON a.public_id = v.public_id JOIN targets t ON t.n = a.n
    ORDER BY v.id, t.endpoint_id`,
    list: auditList('(@teamId::bigint IS NULL OR team_id = @teamId)'),
    // A group's trail by audit_events_team (migration 21), walked backwards from the cursor: a statement
    // of its own, since a generic plan of `@teamId IS NULL OR …` can use no index on team_id.
    listOfTeam: auditList('team_id = @teamId::bigint'),
  },
  { prepared: true },
);

export function auditEvents(db: PostgresDatabase) {
  const write = async (tx: Queryable, context: AuditContext, entries: AuditEntry[]): Promise<void> => {
    if (entries.length === 0) return;
    const audited = {
      ...contextParameters(context),
      syncId: context.syncId ?? null,
      workspaceIds: entries.map((entry) => entry.workspaceId),
      environments: entries.map((entry) => entry.environment),
      actions: entries.map((entry) => entry.action),
      teamIds: entries.map((entry) => entry.teamId ?? null),
      providedIds: entries.map((entry) => entry.providedId ?? null),
      changes: entries.map(serializeChanges),
    };
    const events = announcedEvents(entries, context.syncId);
    if (events.length === 0) {
      await tx.rows(sql.insert(audited));
      return;
    }
    await tx.rows(
      sql.insertAnnouncing({
        ...audited,
        publicIds: events.map((event) => event.publicId),
        types: events.map((event) => event.type),
        eventWorkspaceIds: events.map((event) => event.workspaceId),
        eventEnvironments: events.map((event) => event.environment),
        orderingKeys: events.map((event) => event.orderingKey),
        // Read whether or not an endpoint wants the event: the statement decides, in the change's snapshot.
        bodies: events.map((event) => event.body()),
      }),
    );
  };

  return {
    /**
     * Wraps a mutation in one transaction and writes its audit entries inside it, so the change and
     * its audit events commit together or not at all.
     */
    withAudit<A extends unknown[], R>(
      mutation: (tx: Queryable, context: AuditContext, ...args: A) => Promise<Audited<R>>,
    ) {
      return (context: AuditContext, ...args: A): Promise<R> =>
        db.transaction(async (tx) => {
          const { result, entries } = await mutation(tx, context, ...args);
          await write(tx, context, entries);
          return result;
        });
    },

    /**
     * The same, for a mutation with very many entries (a sync's): written in chunks of `chunk`, each
     * one statement well inside the statement timeout, all in the one transaction.
     */
    withChunkedAudit<A extends unknown[], R>(
      chunk: number,
      mutation: (tx: Queryable, context: AuditContext, ...args: A) => Promise<Audited<R>>,
    ) {
      return (context: AuditContext, ...args: A): Promise<R> =>
        db.transaction(async (tx) => {
          const { result, entries } = await mutation(tx, context, ...args);
          for (let start = 0; start < entries.length; start += chunk)
            await write(tx, context, entries.slice(start, start + chunk));
          return result;
        });
    },

    async list(query: AuditEventQuery): Promise<AuditEventRecord[]> {
      const list = query.teamId === undefined ? sql.list : sql.listOfTeam;
      const rows = await db.rows<PostgresAuditRow>(list(auditQueryParameters(query)));
      return rows.map(toAuditEvent);
    },
  };
}

export type AuditEvents = ReturnType<typeof auditEvents>;
