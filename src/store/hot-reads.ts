import type { ApiTokenCheck } from '../domain/api-token-check.js';
import type { UserGroupRecord } from '../domain/models.js';
import type { Tenant } from '../domain/tenancy.js';
import { lookupBatch } from './lookup-batch.js';
import type { BatchedUserGroupReads, UserGroupLookup, UserGroupLookupAnswer, UserGroupStore } from './store.js';

/**
 * The hot reads (get-or-create of an existing group, verify) of both engines: the finds asked for in
 * one turn of the event loop go to the engine as one lookUpUserGroups, each with its caller's API
 * token to confirm in the same snapshot when its check is unsettled, and each check is settled from
 * its own answer. One snapshot and one round trip per turn instead of one each: on PostgreSQL one
 * statement, on SQLite one read transaction (docs/performance.md, issue 15).
 */
export function batchedUserGroupReads(lookUp: UserGroupStore['lookUpUserGroups']): Pick<UserGroupStore, BatchedUserGroupReads> {
  const byProvidedId = lookupBatch((lookups: UserGroupLookup[]) => lookUp('providedId', lookups));
  const byTokenHash = lookupBatch((lookups: UserGroupLookup[]) => lookUp('tokenHash', lookups));

  const find = async (
    batch: (lookup: UserGroupLookup) => Promise<UserGroupLookupAnswer>,
    tenant: Tenant,
    key: string,
    check: ApiTokenCheck | undefined,
  ): Promise<UserGroupRecord | null> => {
    // A check already settled (by an earlier read of the same request) is not read again.
    const confirming = check !== undefined && !check.settled;
    const answer = await batch(confirming ? { tenant, key, apiToken: { id: check.apiTokenId, hash: check.apiTokenHash } } : { tenant, key });
    if (confirming) check.settle(answer.apiToken ?? null);
    return answer.group;
  };

  return {
    findUserGroupByProvidedId: (tenant, providedId, check) => find(byProvidedId, tenant, providedId, check),
    findUserGroupByTokenHash: (tenant, tokenHash, check) => find(byTokenHash, tenant, tokenHash, check),
  };
}
