import type { AuditContext } from '../../../domain/audit/audit.records.js';
import type { NewUserGroup, UserGroupRecord } from '../../../domain/user-groups/user-group.records.js';
import { batchWriteEntry, batchWriteFailure } from '../../../domain/user-groups/user-groups.rules.js';
import type { AuditEntry } from '../../../domain/audit/audit-entry.js';
import type { UserGroupWrite } from '../../../domain/user-groups/user-groups.port.js';
import type { Tenant } from '../../../domain/tenancy.js';
import { type AuditEvents } from '../audit-events.js';
import { failure } from '../../../domain/errors.js';
import { LOST_TO_CONCURRENT_CHANGE, retryWhileContended } from '../../../domain/retry-policy.js';
import { isTransientConflict } from '../postgres-errors.js';
import type { Queryable } from '../postgres-database.js';
import { toNumber } from '../rows.js';
import type { Int8 } from '../rows.js';
import { statements } from '../statements.js';
import { TEAM_ID_GAP_SQL } from '../../team-id-gaps.js';
import { gapsAfterKeeping } from '../../../domain/user-groups/team-ids.rules.js';
import { insertGroup } from './group-writes.js';
import { applyWriteAlone } from './sync-runs.js';

/** The sequence's mark: the highest team_id issued or kept. */
const TEAM_ID_MARK = 'SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS mark FROM user_groups_team_id_seq';

/** Before a batch that may keep team_ids: serialises it with every other insert into user_groups. */
const LOCK_FOR_TEAM_IDS = 'LOCK TABLE user_groups IN SHARE ROW EXCLUSIVE MODE';
/** After it: later team_ids are issued above every one kept. */
const ISSUE_ABOVE_KEPT = `SELECT setval('user_groups_team_id_seq', max(team_id)) FROM user_groups
  HAVING max(team_id) > (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM user_groups_team_id_seq)`;

/** The team ids an import keeps: the table lock, the mark and the gaps (team-ids.rules.ts). */
export const importSql = statements(
  {
    lockForTeamIds: LOCK_FOR_TEAM_IDS,
    issueAboveKept: ISSUE_ABOVE_KEPT,
    teamIdMark: TEAM_ID_MARK,
    teamIdGapHolding: TEAM_ID_GAP_SQL.holding.replaceAll('@teamId', '@teamId::bigint'),
    removeTeamIdGap: TEAM_ID_GAP_SQL.remove.replace('@low', '@low::bigint'),
    addTeamIdGap: TEAM_ID_GAP_SQL.add.replace('@low', '@low::bigint').replace('@high', '@high::bigint'),
    // Each kept number raises the mark at once, so the next line of the batch is judged against it.
    raiseTeamIdMark: `SELECT setval('user_groups_team_id_seq', @teamId::bigint) FROM (${TEAM_ID_MARK}) m
      WHERE @teamId::bigint > m.mark`,
  },
  { prepared: true },
);

const lostOnTransientConflict = (error: unknown): typeof LOST_TO_CONCURRENT_CHANGE => {
  if (isTransientConflict(error)) return LOST_TO_CONCURRENT_CHANGE;
  throw error;
};

/**
 * The per-batch policy of applyUserGroupWrites, an import's batches: each one transaction, its creates
 * keeping the team ids asked for.
 */
export function perBatchWrites(audit: AuditEvents) {
  /**
   * An import's create, under the table lock: a team_id kept from a gap or above the mark updates the
   * gaps (team-ids.rules.ts) and raises the mark. setval is not rolled back with the transaction: a
   * batch that fails leaves the numbers it jumped over unkept, never issued twice.
   */
  const insertKeepingTeamId = async (tx: Queryable, group: NewUserGroup): Promise<UserGroupRecord | undefined> => {
    const teamId = group.teamId;
    if (teamId === undefined) return insertGroup(tx, group);
    const [markRow] = await tx.rows<{ mark: Int8 }>(importSql.teamIdMark());
    const mark = toNumber(markRow?.mark ?? 0);
    const created = await insertGroup(tx, group);
    if (created?.teamId !== teamId) return created;
    const [holding] = await tx.rows<{ low: Int8; high: Int8 }>(importSql.teamIdGapHolding({ teamId }));
    const { remove, add } = gapsAfterKeeping(
      teamId,
      mark,
      holding ? { low: toNumber(holding.low), high: toNumber(holding.high) } : null,
    );
    if (remove) await tx.rows(importSql.removeTeamIdGap({ low: remove.low }));
    for (const gap of add) await tx.rows(importSql.addTeamIdGap({ ...gap }));
    await tx.rows(importSql.raiseTeamIdMark({ teamId }));
    return created;
  };

  /** A create keeping its team_id, its refusal naming its line as one on its own would. */
  const createKeepingTeamId = async (tx: Queryable, write: Extract<UserGroupWrite, { kind: 'create' }>) => {
    try {
      return batchWriteEntry(write, await insertKeepingTeamId(tx, write.group));
    } catch (error) {
      throw batchWriteFailure(write, error);
    }
  };

  // The batch path of an import: no re-reads, one audit entry per write.
  const writeBatch = audit.withAudit(async (tx, _context: AuditContext, tenant: Tenant, writes: UserGroupWrite[]) => {
    const entries: AuditEntry[] = [];
    const keepsTeamIds = writes.some((write) => write.kind === 'create' && write.group.teamId !== undefined);
    if (keepsTeamIds) await tx.rows(importSql.lockForTeamIds());
    for (const write of writes)
      entries.push(
        write.kind === 'create' ? await createKeepingTeamId(tx, write) : await applyWriteAlone(tx, tenant, write),
      );
    if (keepsTeamIds) await tx.rows(importSql.issueAboveKept());
    return { result: undefined, entries };
  });
  // Two batches writing the same rows in opposite orders: PostgreSQL ends one with a deadlock, which
  // changed nothing; it is a lost race like any other (docs/adr/0012-tree-root-locks.md).
  return (tenant: Tenant, writes: UserGroupWrite[], context: Omit<AuditContext, 'changes'>) =>
    retryWhileContended(
      () => writeBatch(context, tenant, writes).catch(lostOnTransientConflict),
      () => failure.unavailable(new Error('a user group batch kept deadlocking')),
    );
}
