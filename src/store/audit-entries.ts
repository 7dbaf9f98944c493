import type {
  ApiTokenRecord,
  AuditAction,
  AuditEventRecord,
  DataSourceRecord,
  FieldChanges,
  RateLimit,
  SchemaRecord,
  SigningKeyRecord,
  UserGroupRecord,
  WebhookSubject,
  Workspace,
} from '../domain/models.js';
import type { Actor, Environment } from '../domain/tenancy.js';
import type { AuditEventQuery } from './store.js';

/*
 * What both engines write into audit_events and read back out of it. Keeping the entry builders in
 * one place means a change is audited the same way whichever engine commits it.
 */

/** What the store knows about the entity a change touched; the AuditContext supplies the rest. */
export interface AuditEntry {
  action: AuditAction;
  workspaceId: number;
  environment: Environment | null;
  teamId?: number;
  providedId?: string;
  changes: FieldChanges | null;
  /**
   * The object as the change left it (or, deleted, as it was), for a change that may announce a
   * webhook event. Read only when an endpoint wants the event, inside the change's transaction.
   */
  subject?: () => WebhookSubject;
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

export function workspaceCreatedEntry(workspace: Workspace): AuditEntry {
  return {
    action: 'workspace.created',
    workspaceId: workspace.id,
    environment: null,
    changes: creationChanges({ id: workspace.id, name: workspace.name }),
  };
}

/** A token's rate limit as the API and its audit events show it. */
export function rateLimitAuditValue(rateLimit: RateLimit | null): { per_second: number; burst: number } | null {
  return rateLimit && { per_second: rateLimit.perSecond, burst: rateLimit.burst };
}

/** The token's hash never enters its audit event: only what an admin may see. */
export function apiTokenCreatedEntry(record: ApiTokenRecord): AuditEntry {
  const fields = { id: record.id, name: record.name, scope: record.scope, environment: record.environment };
  return {
    action: 'api_token.created',
    workspaceId: record.workspaceId,
    environment: record.environment,
    // A token on the server's default limit records no rate_limit, as before there were per-token limits.
    changes: creationChanges(record.rateLimit ? { ...fields, rate_limit: rateLimitAuditValue(record.rateLimit) } : fields),
    subject: () => ({ kind: 'api_token', apiToken: record }),
  };
}

export function apiTokenUpdatedEntry(before: ApiTokenRecord, after: ApiTokenRecord): AuditEntry {
  return {
    action: 'api_token.updated',
    workspaceId: after.workspaceId,
    environment: after.environment,
    changes: { rate_limit: { before: rateLimitAuditValue(before.rateLimit), after: rateLimitAuditValue(after.rateLimit) } },
  };
}

export function apiTokenRevokedEntry(record: ApiTokenRecord): AuditEntry {
  return {
    action: 'api_token.revoked',
    workspaceId: record.workspaceId,
    environment: record.environment,
    changes: { revoked_at: { before: null, after: record.revokedAt } },
    subject: () => ({ kind: 'api_token', apiToken: record }),
  };
}

export function schemaCreatedEntry(schema: SchemaRecord): AuditEntry {
  return {
    action: 'schema.created',
    workspaceId: schema.workspaceId,
    environment: null,
    changes: creationChanges({ id: schema.id, name: schema.name }),
  };
}

/** The audited fields of a data source, under the snake_case names its audit events use. */
export function dataSourceAuditFields(record: DataSourceRecord): Record<string, unknown> {
  return { id: record.id, provided_id: record.providedId, name: record.name, schema_id: record.schemaId };
}

export function dataSourceEntry(action: AuditAction, record: DataSourceRecord, changes: FieldChanges | null): AuditEntry {
  return { action, workspaceId: record.workspaceId, environment: record.environment, providedId: record.providedId, changes };
}

/** What a user group's audit event names: enough to find the group, never its token. */
export type GroupIdentity = Pick<UserGroupRecord, 'teamId' | 'workspaceId' | 'environment' | 'providedId'>;

/**
 * A user group's audit event names the group; its webhook subject is the whole group without its
 * token, given as the record itself or as a read of it (so that a batch reads only when asked).
 */
export function groupEntry(action: AuditAction, group: UserGroupRecord, changes: FieldChanges | undefined): AuditEntry;
export function groupEntry(action: AuditAction, group: GroupIdentity, changes: FieldChanges | undefined, read: () => UserGroupRecord): AuditEntry;
export function groupEntry(
  action: AuditAction,
  group: GroupIdentity,
  changes: FieldChanges | undefined,
  read?: () => UserGroupRecord,
): AuditEntry {
  return {
    action,
    workspaceId: group.workspaceId,
    environment: group.environment,
    teamId: group.teamId,
    providedId: group.providedId,
    changes: changes ?? null,
    subject: () => {
      const { tokenHash: _hash, tokenCiphertext: _ciphertext, ...userGroup } = read ? read() : (group as UserGroupRecord);
      return { kind: 'user_group', userGroup };
    },
  };
}

/** A deployment-wide event, recorded in the workspace of the operator who ran it. */
export function keyRotationEntry(workspaceId: number, changes: FieldChanges | undefined): AuditEntry {
  return { action: 'encryption_key.rotated', workspaceId, environment: null, changes: changes ?? null };
}

/** The actor as the audit_events columns hold it. */
export function actorColumns(actor: Actor): { actorType: Actor['type']; actorApiTokenId: number | null; actorName: string | null } {
  return actor.type === 'api_token'
    ? { actorType: 'api_token', actorApiTokenId: actor.apiTokenId, actorName: actor.name }
    : { actorType: 'cli', actorApiTokenId: null, actorName: null };
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
  action: AuditAction;
  team_id: number | null;
  provided_id: string | null;
  changes: FieldChanges | null;
  request_id: string | null;
}

function toActor(row: AuditEventRow): Actor {
  return row.actor_type === 'api_token'
    ? { type: 'api_token', apiTokenId: row.actor_api_token_id ?? 0, name: row.actor_name ?? '' }
    : { type: 'cli' };
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
  };
}

/** The `changes` column's text; null stays SQL NULL rather than the JSON text "null". */
export function serializeChanges(entry: AuditEntry): string | null {
  return entry.changes === null ? null : JSON.stringify(entry.changes);
}

/** The named parameters of both engines' audit listing statement: an absent filter is null. */
export function auditQueryParameters(query: AuditEventQuery): Record<string, unknown> {
  return {
    workspaceId: query.workspaceId,
    environment: query.environment ?? null,
    teamId: query.teamId ?? null,
    action: query.action ?? null,
    since: query.since ?? null,
    until: query.until ?? null,
    // Always bound, so that a later page starts its walk of audit_events_workspace at the cursor.
    beforeId: query.beforeId ?? Number.MAX_SAFE_INTEGER,
    limit: query.limit,
  };
}

/** A workspace's first signing key, or a rotation to a new one: the kids, never key material. */
export function signingKeyEntry(current: SigningKeyRecord, retired: SigningKeyRecord | null): AuditEntry {
  if (!retired) return { action: 'signing_key.created', workspaceId: current.workspaceId, environment: null, changes: creationChanges({ kid: current.kid }) };
  const { privateKeyCiphertext: _private, ...signingKey } = current;
  return {
    action: 'signing_key.rotated',
    workspaceId: current.workspaceId,
    environment: null,
    changes: { kid: { before: retired.kid, after: current.kid } },
    subject: () => ({ kind: 'signing_key', signingKey, retiredKid: retired.kid }),
  };
}
