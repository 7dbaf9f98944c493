import type { AuditEntry } from '../audit/audit-entry.js';
import { atPosition, failure, isAppError, type AppError } from '../errors.js';
import type { UserGroupWrite } from './user-groups.port.js';
import type { FieldChanges } from '../audit/audit.records.js';
import type { UserGroupRecord } from './user-group.records.js';

/*
 * What a user group's change writes into the audit trail. The diffs themselves (what a PUT or an
 * import changes) are in user-group-diff.ts; the hierarchy's rules in hierarchy.ts. PostgreSQL's
 * one-statement writes bind the same `GroupAudit` as parameters of their audit CTE.
 */

export type GroupAction =
  'user_group.created' | 'user_group.updated' | 'user_group.token_rotated' | 'user_group.deleted';

/** The part of a group's audit event that does not depend on the row: its action and changes. */
export interface GroupAudit {
  action: GroupAction;
  changes: FieldChanges | null;
}

export function groupAudit(action: GroupAction, changes: FieldChanges | undefined): GroupAudit {
  return { action, changes: changes ?? null };
}

/** What a user group's audit event names: enough to find the group, never its token. */
export type GroupIdentity = Pick<UserGroupRecord, 'teamId' | 'workspaceId' | 'environment' | 'providedId'>;

/**
 * A user group's audit event names the group; its webhook subject is the whole group without its
 * token, given as the record itself or as a read of it (so that a batch reads only when asked).
 */
export function groupEntry(audit: GroupAudit, group: UserGroupRecord): AuditEntry;
export function groupEntry(audit: GroupAudit, group: GroupIdentity, read: () => UserGroupRecord): AuditEntry;
export function groupEntry(
  { action, changes }: GroupAudit,
  group: GroupIdentity,
  read?: () => UserGroupRecord,
): AuditEntry {
  return {
    action,
    workspaceId: group.workspaceId,
    environment: group.environment,
    teamId: group.teamId,
    providedId: group.providedId,
    changes,
    subject: () => {
      const {
        tokenHash: _hash,
        tokenCiphertext: _ciphertext,
        ...userGroup
      } = read ? read() : (group as UserGroupRecord);
      return { kind: 'user_group', userGroup };
    },
  };
}

/**
 * The audit entry of one write of a batch (an import's or a sync's), given the row it wrote. A write
 * that wrote nothing (the group was created, changed or deleted since the batch was planned) refuses
 * the whole batch: the engine's transaction rolls back, audit entries included.
 */
export function batchWriteEntry(
  write: UserGroupWrite<unknown>,
  written: UserGroupRecord | null | undefined,
): AuditEntry;
export function batchWriteEntry(
  write: UserGroupWrite<unknown>,
  written: GroupIdentity | null | undefined,
  read: () => UserGroupRecord,
): AuditEntry;
export function batchWriteEntry(
  write: UserGroupWrite<unknown>,
  written: GroupIdentity | null | undefined,
  read?: () => UserGroupRecord,
): AuditEntry {
  if (!written) throw batchWriteLost(write);
  const action =
    write.kind === 'create'
      ? 'user_group.created'
      : write.kind === 'update'
        ? 'user_group.updated'
        : 'user_group.deleted';
  const audit = groupAudit(action, write.changes);
  return read ? groupEntry(audit, written, read) : groupEntry(audit, written as UserGroupRecord);
}

/** The refusal of a write that found its row created, changed or deleted since the batch was planned. */
export function batchWriteLost(write: UserGroupWrite<unknown>): AppError {
  return write.kind === 'create'
    ? failure.batchGroupCreated((write.group as { providedId: string }).providedId)
    : failure.batchGroupChanged(write.kind === 'update' ? write.update.teamId : write.teamId);
}

/** A write's refusal as the caller sees it: naming the file's line, when the write has one. */
export function batchWriteFailure(write: UserGroupWrite<unknown>, error: unknown): unknown {
  return isAppError(error) && write.kind !== 'delete' && write.at !== undefined ? atPosition(error, write.at) : error;
}
