import type { Database } from 'better-sqlite3';
import type { AuditAction, AuditContext, AuditEventRecord, FieldChanges } from '../../domain/models.js';
import type { Actor, Environment } from '../../domain/tenancy.js';
import type { AuditEventQuery } from '../store.js';
import { preparedOnFirstUse } from './prepared.js';

/** What the store knows about the entity a change touched; the AuditContext supplies the rest. */
export interface AuditEntry {
  action: AuditAction;
  workspaceId: number;
  environment: Environment | null;
  teamId?: number;
  providedId?: string;
  changes: FieldChanges | null;
}

/** A mutation's result together with the audit entries that must commit with it. */
export interface Audited<R> {
  result: R;
  entries: AuditEntry[];
}

/** Audit changes of a newly created entity: every field went from nothing to its value. */
export function creationChanges(fields: Record<string, unknown>): FieldChanges {
  return Object.fromEntries(Object.entries(fields).map(([key, after]) => [key, { before: null, after }]));
}

/** Audit changes of a deleted entity: every field went from its value to nothing. */
export function deletionChanges(fields: Record<string, unknown>): FieldChanges {
  return Object.fromEntries(Object.entries(fields).map(([key, before]) => [key, { before, after: null }]));
}

interface AuditRow {
  id: number;
  at: string;
  workspace_id: number;
  environment: Environment | null;
  actor_type: Actor['type'];
  actor_api_token_id: number | null;
  actor_name: string | null;
  action: AuditAction;
  team_id: number | null;
  provided_id: string | null;
  changes: string | null;
  request_id: string | null;
}

function toActor(row: AuditRow): Actor {
  return row.actor_type === 'api_token'
    ? { type: 'api_token', apiTokenId: row.actor_api_token_id ?? 0, name: row.actor_name ?? '' }
    : { type: 'cli' };
}

function toAuditEvent(row: AuditRow): AuditEventRecord {
  return {
    id: row.id,
    at: row.at,
    workspaceId: row.workspace_id,
    environment: row.environment,
    actor: toActor(row),
    action: row.action,
    teamId: row.team_id,
    providedId: row.provided_id,
    changes: row.changes === null ? null : (JSON.parse(row.changes) as FieldChanges),
    requestId: row.request_id,
  };
}

export function auditEvents(db: Database) {
  const sql = preparedOnFirstUse(db, {
    insert: `INSERT INTO audit_events
      (at, workspace_id, environment, actor_type, actor_api_token_id, actor_name, action, team_id, provided_id, changes, request_id)
      VALUES (@at, @workspaceId, @environment, @actorType, @actorApiTokenId, @actorName, @action, @teamId, @providedId, @changes, @requestId)`,
    list: `SELECT * FROM audit_events
      WHERE workspace_id = @workspaceId
        AND (@environment IS NULL OR environment = @environment)
        AND (@teamId IS NULL OR team_id = @teamId)
        AND (@action IS NULL OR action = @action)
        AND (@since IS NULL OR at >= @since)
        AND (@until IS NULL OR at < @until)
        AND id < @beforeId
      ORDER BY id DESC LIMIT @limit`,
  });

  const write = (context: AuditContext, entry: AuditEntry): void => {
    const { actor } = context;
    sql.insert.run({
      at: context.at,
      workspaceId: entry.workspaceId,
      environment: entry.environment,
      actorType: actor.type,
      actorApiTokenId: actor.type === 'api_token' ? actor.apiTokenId : null,
      actorName: actor.type === 'api_token' ? actor.name : null,
      action: entry.action,
      teamId: entry.teamId ?? null,
      providedId: entry.providedId ?? null,
      changes: entry.changes === null ? null : JSON.stringify(entry.changes),
      requestId: context.requestId,
    });
  };

  return {
    /**
     * Wraps a mutation in a BEGIN IMMEDIATE transaction (taking the write lock up front, so it never
     * fails half-way on a lock upgrade) and writes its audit entries inside that same transaction.
     */
    withAudit<A extends unknown[], R>(mutation: (context: AuditContext, ...args: A) => Audited<R>) {
      const transaction = db.transaction((context: AuditContext, ...args: A): R => {
        const { result, entries } = mutation(context, ...args);
        for (const entry of entries) write(context, entry);
        return result;
      });
      return (context: AuditContext, ...args: A): R => transaction.immediate(context, ...args);
    },

    list(query: AuditEventQuery): AuditEventRecord[] {
      const rows = sql.list.all({
        workspaceId: query.workspaceId,
        environment: query.environment ?? null,
        teamId: query.teamId ?? null,
        action: query.action ?? null,
        since: query.since ?? null,
        until: query.until ?? null,
        // Always bound, so that a later page starts its walk of audit_events_workspace at the cursor.
        beforeId: query.beforeId ?? Number.MAX_SAFE_INTEGER,
        limit: query.limit,
      });
      return (rows as AuditRow[]).map(toAuditEvent);
    },
  };
}

export type AuditEvents = ReturnType<typeof auditEvents>;
