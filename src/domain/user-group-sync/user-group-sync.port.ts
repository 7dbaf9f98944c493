import type { AuditContext } from '../audit/audit.records.js';
import type { NewUserGroup } from '../user-groups/user-group.records.js';
import type { Tenant } from '../tenancy.js';
import type { SyncStep } from './user-group-sync.rules.js';

/** A step as the engine writes it: a create carries its new group's token (hash and ciphertext). */
export type SyncWrite = SyncStep<NewUserGroup>;

/** What a sync's audit events and webhook events record: who, when, in which request, and which sync. */
export type SyncAuditContext = Omit<AuditContext, 'changes'> & { syncId: string };

/** A group's place in the tree, and nothing else: what a sync's plan walks (cheap to read in bulk). */
export interface UserGroupLink {
  teamId: number;
  providedId: string;
  /** Null for a root. */
  parentTeamId: number | null;
}

export interface UserGroupSyncStore {
  /**
   * The children of the groups with these team ids (any number of them) in the tenant, in team_id
   * order: one statement on the parent index, never a walk of the tenant per parent. Unknown ids have none.
   */
  listUserGroupChildren(tenant: Tenant, parentTeamIds: number[]): Promise<UserGroupLink[]>;
  /**
   * The groups carrying `tag`, in team_id order after `afterTeamId`, at most `limit`: their links only,
   * so that counting what a prune would delete reads no properties, mappings or ancestors.
   */
  listTaggedUserGroupLinks(
    tenant: Tenant,
    tag: string,
    page: { afterTeamId?: number; limit: number },
  ): Promise<UserGroupLink[]>;
}
