import type { AuditAction, AuditEventRecord, FieldChanges } from '../domain/audit/audit.records.js';
import type { AuditEntry } from '../domain/audit/audit-entry.js';
import type { Actor, Environment } from '../domain/tenancy.js';
import type { AuditEventQuery } from '../domain/audit/audit.port.js';

/*
 * audit_events as both engines write and read it: the entries come from the rules modules
 * (src/domain/*.rules.ts); this is their row form.
 */

/** The actor as the audit_events columns hold it. */
export function actorColumns(actor: Actor): {
  actorType: Actor['type'];
  actorApiTokenId: number | null;
  actorName: string | null;
  actorIssuer: string | null;
  actorSubject: string | null;
} {
  if (actor.type === 'api_token')
    return {
      actorType: 'api_token',
      actorApiTokenId: actor.apiTokenId,
      actorName: actor.name,
      actorIssuer: null,
      actorSubject: null,
    };
  if (actor.type === 'person')
    // The email is shown, never used to identify: (issuer, sub) does that.
    return {
      actorType: 'person',
      actorApiTokenId: null,
      actorName: actor.email,
      actorIssuer: actor.issuer,
      actorSubject: actor.subject,
    };
  return { actorType: 'cli', actorApiTokenId: null, actorName: null, actorIssuer: null, actorSubject: null };
}

/** An audit_events row once the engine has decoded its own types (ids, timestamps, JSON). */
export interface AuditEventRow {
  id: number;
  at: string;
  workspace_id: number;
  environment: Environment | null;
  actor_type: Actor['type'];
  actor_api_token_id: number | null;
  actor_name: string | null;
  actor_issuer: string | null;
  actor_subject: string | null;
  action: AuditAction;
  team_id: number | null;
  provided_id: string | null;
  changes: FieldChanges | null;
  request_id: string | null;
  sync_id: string | null;
}

function toActor(row: AuditEventRow): Actor {
  if (row.actor_type === 'api_token')
    return { type: 'api_token', apiTokenId: row.actor_api_token_id ?? 0, name: row.actor_name ?? '' };
  if (row.actor_type === 'person')
    return { type: 'person', issuer: row.actor_issuer ?? '', subject: row.actor_subject ?? '', email: row.actor_name };
  return { type: 'cli' };
}

export function auditEventFromRow(row: AuditEventRow): AuditEventRecord {
  return {
    id: row.id,
    at: row.at,
    workspaceId: row.workspace_id,
    environment: row.environment,
    actor: toActor(row),
    action: row.action,
    teamId: row.team_id,
    providedId: row.provided_id,
    changes: row.changes,
    requestId: row.request_id,
    syncId: row.sync_id,
  };
}

/** The `changes` column's text; null stays SQL NULL rather than the JSON text "null". */
export function serializeChanges(entry: Pick<AuditEntry, 'changes'>): string | null {
  return entry.changes === null ? null : JSON.stringify(entry.changes);
}

/** The named parameters of both engines' audit listing statement: an absent filter is null. */
export function auditQueryParameters(query: AuditEventQuery): Record<string, unknown> {
  return {
    workspaceId: query.workspaceId,
    environment: query.environment ?? null,
    teamId: query.teamId ?? null,
    action: query.action ?? null,
    personIssuer: query.person?.issuer ?? null,
    personSubject: query.person?.subject ?? null,
    since: query.since ?? null,
    until: query.until ?? null,
    // Always bound, so that a later page starts its walk of audit_events_workspace at the cursor.
    beforeId: query.beforeId ?? Number.MAX_SAFE_INTEGER,
    limit: query.limit,
  };
}
