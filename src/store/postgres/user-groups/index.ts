import type { UserGroupSyncStore } from '../../../domain/user-group-sync/user-group-sync.port.js';
import type { BatchedUserGroupReads, UserGroupStore } from '../../../domain/user-groups/user-groups.port.js';
import { type AuditEvents } from '../audit-events.js';
import type { PostgresDatabase } from '../postgres-database.js';
import { userGroupReads } from './reads.js';
import { singleWrites } from './single-writes.js';
import { perBatchWrites } from './import-batches.js';
import { allOrNothingWrites } from './sync-runs.js';

export { decodeUserGroupRow, SELECT_GROUP, type PostgresUserGroupRow } from './columns.js';

/*
 * PostgreSQL's user groups, by kind of access: reads (reads.ts), the writes of one group a request asks
 * for (single-writes.ts, each as a statement or a transaction: statement-or-transaction.ts), those of
 * one turn batched (turn-batches.ts), and applyUserGroupWrites: its per-batch policy, an import's
 * batches (import-batches.ts), and its all-or-nothing one, a sync's runs (sync-runs.ts); what they share: the group's columns and decoding (columns.ts, from
 * src/store/user-group-columns.ts), the insert and patch of one group (group-writes.ts) and the locks
 * of trees and the hierarchy's facts (trees.ts).
 */
export function userGroupMethods(
  db: PostgresDatabase,
  audit: AuditEvents,
): Omit<UserGroupStore, BatchedUserGroupReads> & UserGroupSyncStore {
  const perBatch = perBatchWrites(audit);
  const allOrNothing = allOrNothingWrites(audit);
  return {
    ...userGroupReads(db),
    ...singleWrites(db, audit),
    applyUserGroupWrites: (tenant, writes, context, policy) =>
      policy.policy === 'all_or_nothing'
        ? allOrNothing(tenant, writes, context, policy.signal)
        : perBatch(tenant, writes, context),
  };
}
