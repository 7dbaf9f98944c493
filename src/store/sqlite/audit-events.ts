import type { Database } from 'better-sqlite3';
import type { AuditContext, AuditEventRecord, FieldChanges } from '../../domain/audit/audit.records.js';
import { actorColumns, auditEventFromRow, auditQueryParameters, serializeChanges } from '../audit-rows.js';
import type { AuditEventRow } from '../audit-rows.js';
import type { AuditEntry, Audited } from '../../domain/audit/audit-entry.js';
import type { AuditEventQuery } from '../../domain/audit/audit.port.js';
import { preparedOnFirstUse } from './prepared.js';
import { sqliteOutbox } from './webhooks.js';

/** audit_events as SQLite returns it: the changes are JSON text. */
type SqliteAuditRow = Omit<AuditEventRow, 'changes'> & { changes: string | null };

function toAuditEvent(row: SqliteAuditRow): AuditEventRecord {
  return auditEventFromRow({
    ...row,
    changes: row.changes === null ? null : (JSON.parse(row.changes) as FieldChanges),
  });
}

/** The audit trail, newest first from the cursor: `team` is its condition on the group. */
function auditList(team: string): string {
  return `SELECT * FROM audit_events
      WHERE workspace_id = @workspaceId
        AND (@environment IS NULL OR environment = @environment)
        AND ${team}
        AND (@action IS NULL OR action = @action)
        AND (@personSubject IS NULL OR (actor_subject = @personSubject AND actor_issuer = @personIssuer))
        AND (@since IS NULL OR at >= @since)
        AND (@until IS NULL OR at < @until)
        AND id < @beforeId
      ORDER BY id DESC LIMIT @limit`;
}

export function auditEvents(db: Database) {
  const sql = preparedOnFirstUse(db, {
    insert: `INSERT INTO audit_events
      (at, workspace_id, environment, actor_type, actor_api_token_id, actor_name, actor_issuer, actor_subject, action, team_id, provided_id, changes, request_id, sync_id)
      VALUES (@at, @workspaceId, @environment, @actorType, @actorApiTokenId, @actorName, @actorIssuer, @actorSubject, @action, @teamId, @providedId, @changes, @requestId,
        @syncId)`,
    list: auditList('(@teamId IS NULL OR team_id = @teamId)'),
    // A group's trail by audit_events_team (migration 19), walked backwards from the cursor: the
    // planner uses no index on team_id for `@teamId IS NULL OR …`.
    listOfTeam: auditList('team_id = @teamId'),
  });

  const outbox = sqliteOutbox(db);
  const write = (context: AuditContext, entry: AuditEntry): void => {
    sql.insert.run({
      at: context.at,
      workspaceId: entry.workspaceId,
      environment: entry.environment,
      ...actorColumns(context.actor),
      action: entry.action,
      teamId: entry.teamId ?? null,
      providedId: entry.providedId ?? null,
      changes: serializeChanges(entry),
      requestId: context.requestId,
      syncId: context.syncId ?? null,
    });
  };

  return {
    /**
     * Wraps a mutation in a BEGIN IMMEDIATE transaction (taking the write lock up front, so it never
     * fails half-way on a lock upgrade) and writes its audit entries, and the webhook events they
     * announce, inside that same transaction.
     */
    withAudit<A extends unknown[], R>(mutation: (context: AuditContext, ...args: A) => Audited<R>) {
      const transaction = db.transaction((context: AuditContext, ...args: A): R => {
        const { result, entries } = mutation(context, ...args);
        for (const entry of entries) write(context, entry);
        outbox(entries, context.at, context.syncId);
        return result;
      });
      return (context: AuditContext, ...args: A): R => transaction.immediate(context, ...args);
    },

    list(query: AuditEventQuery): AuditEventRecord[] {
      const rows = (query.teamId === undefined ? sql.list : sql.listOfTeam).all(auditQueryParameters(query));
      return (rows as SqliteAuditRow[]).map(toAuditEvent);
    },
  };
}

export type AuditEvents = ReturnType<typeof auditEvents>;
