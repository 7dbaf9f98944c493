import { auditContextOf } from '../audit/audit-context.js';
import { failure } from '../errors.js';
import { sortedTags } from './hierarchy.rules.js';
import { LOST_TO_CONCURRENT_CHANGE, retryWhileContended } from '../retry-policy.js';
import type { Clock } from '../clock.js';
import { checkedAccessRules, type AccessRule } from '../access-rules/access-rules.rules.js';
import { assertRuleSchemasExist } from '../access-rules/access-rule-schemas.js';
import { resolveMapping, type MappingInput } from './mapping.js';
import type { JsonObject } from '../common.records.js';
import type { UserGroupPatch, UserGroupRecord } from './user-group.records.js';
import { assertPropertiesWithinLimits } from './properties.rules.js';
import { requireScope } from '../api-tokens/scopes.js';
import { generateUserGroupToken, hashSecret, isUserGroupTokenShaped } from '../secrets.js';
import { findByUserGroupToken } from './user-group-tokens.js';
import type { Keyring } from '../encryption-keys/keyring.js';
import type { Caller } from '../tenancy.js';
import { diffUserGroup, wholeGroupChanges } from './user-group-diff.rules.js';
import type { UserGroupView, UserGroupViewer } from './user-group.view.js';
import type { DataSourceStore } from '../data-sources/data-sources.port.js';
import type { SchemaStore } from '../schemas/schemas.port.js';
import type { UserGroupStore } from './user-groups.port.js';
import { NO_USAGE_COUNTING, type UsageCounter } from '../usage/usage-counter.js';

/** The tree, demo and tag fields (docs/api.md#hierarchy-demo-groups-and-tags) that get-or-create and PUT both take. */
export interface TreeFieldsInput {
  /** The parent's provided id; null (on PUT) detaches. */
  parentUserGroupId?: string | number | null;
  isDemoGroup?: boolean;
  tags?: string[];
  /** As the request gives them (docs/api.md#access-rules): checked here, field by field; null and [] clear them. */
  accessRules?: unknown;
}

export interface GetOrCreateUserGroupInput extends TreeFieldsInput {
  userGroupId: string | number;
  name?: string;
  mapping?: MappingInput;
  properties?: JsonObject | null;
}

export interface UpdateUserGroupInput extends TreeFieldsInput {
  userGroupId: string | number;
  newUserGroupId?: string | number;
  name?: string;
  /** Null clears the mapping, as {} does. */
  mapping?: MappingInput | null;
  properties?: JsonObject | null;
}

export interface DeleteUserGroupInput {
  currentToken?: string;
  userGroupId?: string | number;
  dataSourceProvidedId?: string;
}

export interface UserGroupServiceDeps {
  store: UserGroupStore & Pick<SchemaStore, 'findSchemasByIds'> & Pick<DataSourceStore, 'findDataSources'>;
  cipher: Keyring;
  clock: Clock;
  view: UserGroupViewer;
  /** Counts reads of existing groups and verifications (docs/api.md#usage-per-group). */
  usage?: UsageCounter;
}

export type UserGroupService = ReturnType<typeof createUserGroupService>;

export function createUserGroupService({
  store,
  cipher,
  clock,
  view,
  usage = NO_USAGE_COUNTING,
}: UserGroupServiceDeps) {
  const notFound = failure.userGroupNotFound;

  const findByToken = (caller: Caller, token: string) => findByUserGroupToken(store, cipher, caller, token);

  async function requireByProvidedId(caller: Caller, userGroupId: string | number): Promise<UserGroupRecord> {
    const group = await store.findUserGroupByProvidedId(caller.tenant, providedIdOf(userGroupId));
    if (!group) throw notFound();
    return group;
  }

  /**
   * Read, decide, then write only if the group is still the version read: a write that lost to a
   * concurrent change of the group (null) re-reads and re-decides, so concurrent writes apply one
   * after the other, each on the state the one before it left (the retry policy's budget aside).
   */
  const retryOnConcurrentChange = <T>(attempt: () => Promise<T | null>): Promise<T> =>
    retryWhileContended(
      async () => (await attempt()) ?? LOST_TO_CONCURRENT_CHANGE,
      () => failure.unavailable(new Error('a user group write kept losing to concurrent changes')),
    );

  return {
    async getOrCreateUserGroup(
      caller: Caller,
      input: GetOrCreateUserGroupInput,
    ): Promise<{ userGroup: UserGroupView; created: boolean }> {
      const providedId = providedIdOf(input.userGroupId);
      // Input limits hold whether or not the group exists; only the catalogue lookups of a mapping
      // wait until a create needs them.
      const properties = input.properties ?? null;
      assertPropertiesWithinLimits(properties);
      const accessRules = checkedAccessRules(input.accessRules);
      // The lookup confirms a remembered API token and admits the request before it returns, so
      // nothing is counted or written for a refused one.
      const existing = await store.findUserGroupByProvidedId(caller.tenant, providedId, caller.tokenCheck);
      if (existing) {
        const userGroup = view(existing);
        usage.read(caller.tenant, existing.teamId);
        return { userGroup, created: false };
      }

      requireScope(caller, 'write');
      const mapping = await resolveMapping(store, caller.tenant, input.mapping ?? {});
      await assertRuleSchemasExist(store, caller.tenant, accessRules);
      const token = generateUserGroupToken();
      const name = input.name ?? providedId;
      const createdAt = clock();
      const content = { providedId, name, properties, mapping, ...newTreeFields({ ...input, accessRules }) };
      const { group, created } = await store.insertUserGroupIfAbsent(
        {
          tenant: caller.tenant,
          ...content,
          tokenHash: hashSecret(token),
          tokenCiphertext: cipher.encrypt(token),
          createdAt,
        },
        // One reading of the clock: the group's created_at is its audit event's time.
        auditContextOf(() => createdAt, caller, wholeGroupChanges(content, true)),
      );
      // Losing a creation race to another caller is a get: their token, not ours (and a read of their group).
      if (!created) usage.read(caller.tenant, group.teamId);
      return { userGroup: created ? view(group, token) : view(group), created };
    },

    async updateUserGroup(caller: Caller, input: UpdateUserGroupInput): Promise<UserGroupView> {
      requireScope(caller, 'write');
      if (input.properties !== undefined) assertPropertiesWithinLimits(input.properties);
      const accessRules = input.accessRules === undefined ? undefined : checkedAccessRules(input.accessRules);
      const mapping =
        input.mapping === undefined ? undefined : await resolveMapping(store, caller.tenant, input.mapping ?? {});
      await assertRuleSchemasExist(store, caller.tenant, accessRules);
      const requested: UserGroupPatch = {
        ...(input.newUserGroupId !== undefined ? { providedId: providedIdOf(input.newUserGroupId) } : {}),
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.properties !== undefined ? { properties: input.properties } : {}),
        ...(mapping !== undefined ? { mapping } : {}),
        ...treeFieldsPatch({ ...input, accessRules }),
      };

      return retryOnConcurrentChange(async () => {
        const existing = await requireByProvidedId(caller, input.userGroupId);
        const { patch, changes } = diffUserGroup(existing, requested);
        // An update that changes nothing writes nothing: no version bump, no audit event.
        if (Object.keys(changes).length === 0) return view(existing);
        const updatedAt = clock();
        const updated = await store.updateUserGroup(
          { tenant: caller.tenant, teamId: existing.teamId, expectedVersion: existing.version, patch, updatedAt },
          auditContextOf(() => updatedAt, caller, changes),
        );
        return updated && view(updated);
      });
    },

    async rotateUserGroupToken(caller: Caller, currentToken: string): Promise<UserGroupView> {
      requireScope(caller, 'write');
      // A native token's hash is known without a read; a hosted one's is the one its group is stored under.
      const currentTokenHash = isUserGroupTokenShaped(currentToken)
        ? hashSecret(currentToken)
        : (await findByToken(caller, currentToken))?.tokenHash;
      if (currentTokenHash === undefined) throw notFound();
      // Whatever the current token's format, the new one is native (docs/api.md#tokens-imported-from-the-hosted-product).
      const token = generateUserGroupToken();
      const updatedAt = clock();
      const rotated = await store.rotateUserGroupToken(
        {
          tenant: caller.tenant,
          currentTokenHash,
          newTokenHash: hashSecret(token),
          newTokenCiphertext: cipher.encrypt(token),
          updatedAt,
        },
        auditContextOf(() => updatedAt, caller),
      );
      if (!rotated) throw notFound();
      return view(rotated, token);
    },

    async deleteUserGroup(caller: Caller, input: DeleteUserGroupInput): Promise<void> {
      requireScope(caller, 'write');
      await retryOnConcurrentChange(async () => {
        const group = await findGroupToDelete(caller, input);
        if (input.dataSourceProvidedId !== undefined)
          await assertMapsDataSource(caller, group, input.dataSourceProvidedId);
        const deletion = await store.deleteUserGroup(
          caller.tenant,
          group.teamId,
          group.version,
          auditContextOf(clock, caller, wholeGroupChanges(group, false)),
        );
        if (deletion.status === 'has_children') throw failure.hasChildren(group.providedId, deletion.children);
        return deletion.status === 'deleted' ? true : null;
      });
    },

    async verifyUserGroupToken(caller: Caller, token: string): Promise<UserGroupView> {
      const group = await findByToken(caller, token);
      if (!group) throw notFound();
      const verified = view(group, token);
      usage.verified(caller.tenant, group.teamId);
      return verified;
    },
  };

  async function findGroupToDelete(caller: Caller, input: DeleteUserGroupInput): Promise<UserGroupRecord> {
    const byToken = input.currentToken === undefined ? undefined : await findByToken(caller, input.currentToken);
    if (byToken === null) throw notFound();
    if (input.userGroupId === undefined) {
      // Either field would do, so the error names neither.
      if (!byToken) throw failure.nameTheGroup();
      return byToken;
    }
    const byId = await requireByProvidedId(caller, input.userGroupId);
    if (byToken && byToken.teamId !== byId.teamId) {
      throw failure.userGroupMismatch();
    }
    return byId;
  }

  async function assertMapsDataSource(
    caller: Caller,
    group: UserGroupRecord,
    dataSourceProvidedId: string,
  ): Promise<void> {
    const [dataSource] = await store.findDataSources(caller.tenant, { ids: [], providedIds: [dataSourceProvidedId] });
    const mapped = dataSource !== undefined && group.mapping.some((entry) => entry.dataSourceId === dataSource.id);
    if (!mapped) {
      throw failure.dataSourceNotMapped(dataSourceProvidedId);
    }
  }
}

/** The tree, demo, tag and access-rule fields of a create: what the input gives, else no parent, not a demo group, no tags, no rules. */
export function newTreeFields(input: TreeFieldsInput): {
  parentProvidedId: string | null;
  isDemoGroup: boolean;
  tags: string[];
  accessRules: AccessRule[];
} {
  return {
    parentProvidedId: parentProvidedIdOf(input.parentUserGroupId),
    isDemoGroup: input.isDemoGroup ?? false,
    tags: sortedTags(input.tags ?? []),
    accessRules: checkedAccessRules(input.accessRules),
  };
}

/** The tree, demo, tag and access-rule fields of a patch: only those the input gives (a null parent detaches, null rules clear). */
export function treeFieldsPatch(
  input: TreeFieldsInput,
): Pick<UserGroupPatch, 'parentProvidedId' | 'isDemoGroup' | 'tags' | 'accessRules'> {
  return {
    ...(input.parentUserGroupId !== undefined ? { parentProvidedId: parentProvidedIdOf(input.parentUserGroupId) } : {}),
    ...(input.isDemoGroup !== undefined ? { isDemoGroup: input.isDemoGroup } : {}),
    ...(input.tags !== undefined ? { tags: sortedTags(input.tags) } : {}),
    ...(input.accessRules !== undefined ? { accessRules: checkedAccessRules(input.accessRules) } : {}),
  };
}

/** The parent a request names as a provided id; none (absent or null) is null. */
export function parentProvidedIdOf(parent: string | number | null | undefined): string | null {
  return parent === undefined || parent === null ? null : providedIdOf(parent);
}

/** A JSON integer id is accepted and becomes its decimal string. */
export function providedIdOf(userGroupId: string | number): string {
  return typeof userGroupId === 'number' ? String(userGroupId) : userGroupId;
}
