import type { ApiTokenCheck, ApiTokenState } from '../api-tokens/api-token-check.js';
import type { AuditContext, FieldChanges } from '../audit/audit.records.js';
import type { InputPosition } from '../errors.js';
import type { Tenant } from '../tenancy.js';
import type { NewUserGroup, UserGroupPatch, UserGroupRecord } from './user-group.records.js';

export interface UserGroupUpdate {
  tenant: Tenant;
  teamId: number;
  /** The version the caller read; the update applies only if the row still has it. */
  expectedVersion: number;
  patch: UserGroupPatch;
  updatedAt: string;
}

export interface UserGroupTokenRotation {
  tenant: Tenant;
  currentTokenHash: string;
  newTokenHash: string;
  newTokenCiphertext: string;
  updatedAt: string;
}

export interface UserGroupQuery {
  tenant: Tenant;
  /** Matches a provided-id prefix (exact case) or a name substring (case-insensitive). */
  search?: string;
  /** Only the children of the group with this provided id. */
  parent?: string;
  /** Only groups carrying this tag. */
  tag?: string;
  isDemoGroup?: boolean;
  /** Cursor: only groups with a larger team_id. */
  afterTeamId?: number;
  limit: number;
}

/** Outcome of a delete: done, refused because the row moved on, or refused because groups are linked under it. */
export type UserGroupDeletion =
  { status: 'deleted' } | { status: 'moved' } | { status: 'has_children'; children: number };

/**
 * One write of a batch (an import's or a sync's); `changes` goes into that group's audit event. `at`,
 * the line of a file a create or update comes from, is what its refusal names. `Group` is what a
 * create writes: a sync plans its creates before they have a token (TokenlessGroup).
 */
export type UserGroupWrite<Group = NewUserGroup> =
  | { kind: 'create'; at?: InputPosition; group: Group; changes: FieldChanges }
  | { kind: 'update'; at?: InputPosition; update: UserGroupUpdate; changes: FieldChanges }
  | {
      kind: 'delete';
      tenant: Tenant;
      teamId: number;
      providedId: string;
      expectedVersion: number;
      changes: FieldChanges;
    };

/**
 * How applyUserGroupWrites applies a batch (docs/adr/0034-one-bulk-write-primitive.md). Either way the
 * writes of one call are one transaction, applied in their order or not at all; the policies differ in
 * what the call is part of:
 * - `all_or_nothing` (a sync): the call is the whole change, however many writes; serialised with every
 *   other such call of the tenant; an engine that writes it in several statements stops between them
 *   once `signal` is aborted, throwing `unavailable` and rolling all of it back.
 * - `per_batch` (an import): the call is one batch of many; a create may keep the team_id it asks for,
 *   and a batch that loses a deadlock runs again. The caller learns each line's refusal by writing a
 *   refused batch's writes one at a time.
 */
export type UserGroupWritePolicy = { policy: 'all_or_nothing'; signal?: AbortSignal } | { policy: 'per_batch' };

/** What a hot read looks a group up by. */
export type UserGroupLookupKey = 'providedId' | 'tokenHash';

/** One hot read: a group by provided id or token hash in a tenant. */
export interface UserGroupLookup {
  tenant: Tenant;
  key: string;
  /** The caller's API token, to be read in the same snapshot as the group (an unsettled ApiTokenCheck). */
  apiToken?: { id: number; hash: string };
}

export interface UserGroupLookupAnswer {
  group: UserGroupRecord | null;
  /** The API token's state, when the lookup asked for it: not live when it is revoked or unknown. */
  apiToken?: ApiTokenState;
}

/** The reads every engine answers through lookUpUserGroups, batched by src/store/hot-reads.ts. */
export type BatchedUserGroupReads = 'findUserGroupByProvidedId' | 'findUserGroupByTokenHash';

export interface UserGroupStore {
  /**
   * Many lookups at once, in one snapshot (one statement on PostgreSQL, one read transaction on
   * SQLite), answered in the order asked. The two finds below are these lookups, batched.
   */
  lookUpUserGroups(by: UserGroupLookupKey, lookups: UserGroupLookup[]): Promise<UserGroupLookupAnswer[]>;
  /**
   * With an unsettled `check`, the caller's API token is read in the same snapshot as the group and
   * the check settled with what was read (throwing `invalid_api_token` for a token no longer live).
   * The finds asked for in one turn of the event loop share one lookUpUserGroups.
   */
  findUserGroupByProvidedId(tenant: Tenant, providedId: string, check?: ApiTokenCheck): Promise<UserGroupRecord | null>;
  findUserGroupsByProvidedIds(tenant: Tenant, providedIds: string[]): Promise<UserGroupRecord[]>;
  findUserGroupByTeamId(tenant: Tenant, teamId: number): Promise<UserGroupRecord | null>;
  /** In team_id order. */
  listUserGroups(query: UserGroupQuery): Promise<UserGroupRecord[]>;
  /**
   * Applies the writes of the tenant in their order in one transaction, or none, as `policy` says. A
   * create whose provided id exists, an update or delete whose row moved on from `expectedVersion`,
   * throws `concurrent_change`; a delete of a group that still has children throws
   * `user_group_has_children`; each write is checked as a single write is (the tree, the merged
   * properties, unique ids: `*_taken`), and a refusal names the write's line (`at`). One audit event
   * per write (`user_group.created` / `.updated` / `.deleted`, marked with the audit's `syncId` when it
   * has one) and the webhook events they announce, in the same transaction.
   */
  applyUserGroupWrites(
    tenant: Tenant,
    writes: UserGroupWrite[],
    audit: Omit<AuditContext, 'changes'>,
    policy: UserGroupWritePolicy,
  ): Promise<void>;
  /** `check` as for findUserGroupByProvidedId. */
  findUserGroupByTokenHash(tenant: Tenant, tokenHash: string, check?: ApiTokenCheck): Promise<UserGroupRecord | null>;
  /**
   * Creates the group unless the tenant already has one with that provided id; in that case returns
   * the existing one untouched. Exactly one of any number of concurrent callers sees `created: true`.
   */
  insertUserGroupIfAbsent(
    group: NewUserGroup,
    audit: AuditContext,
  ): Promise<{ group: UserGroupRecord; created: boolean }>;
  /**
   * Applies the patch if the row still has `expectedVersion`; returns the new row, or null when the
   * row is gone or moved on. Throws `user_group_id_taken` when a rename collides. A patch that sets a
   * parent is checked against the tree inside the transaction, serialised with every other change of
   * the tenant's tree (`unknown_parent`, `hierarchy_cycle`, `hierarchy_too_deep`); so is a create.
   */
  updateUserGroup(update: UserGroupUpdate, audit: AuditContext): Promise<UserGroupRecord | null>;
  /** Swaps the token only while `currentTokenHash` is still the group's token; null otherwise. */
  rotateUserGroupToken(rotation: UserGroupTokenRotation, audit: AuditContext): Promise<UserGroupRecord | null>;
  /**
   * Deletes the group only if it still has `expectedVersion` (else `moved`) and no group has it as
   * parent (else `has_children`, counted inside the same transaction).
   */
  deleteUserGroup(
    tenant: Tenant,
    teamId: number,
    expectedVersion: number,
    audit: AuditContext,
  ): Promise<UserGroupDeletion>;
}
