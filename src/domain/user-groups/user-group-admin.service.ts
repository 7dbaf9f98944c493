import { failure } from '../errors.js';
import { fetchPageWithinBytes, type Page } from '../pagination.js';
import { requireScope } from '../api-tokens/scopes.js';
import { readsSecrets, type Caller } from '../tenancy.js';
import { assertTag } from './hierarchy.rules.js';
import type { UserGroupRecord } from './user-group.records.js';
import { userGroupFieldsView, type UserGroupAdminView, type UserGroupViewer } from './user-group.view.js';
import type { UserGroupQuery, UserGroupStore } from './user-groups.port.js';

/** A listing within the caller's tenant: the store's query without the tenant, which the caller's token decides. */
export type UserGroupListQuery = Omit<UserGroupQuery, 'tenant'>;

/**
 * A page of groups ends once its groups pass this many bytes (as JSON), whatever its limit: each
 * group may carry up to twice 64 KiB of properties (its own and the merged ones), so a page of a
 * thousand could otherwise weigh a hundred MB.
 */
export const MAX_GROUP_PAGE_BYTES = 4 * 1024 * 1024;

export type UserGroupAdminService = ReturnType<typeof createUserGroupAdminService>;

/** Operators' read access to groups: list, search, and look up by team_id, inside the caller's tenant. */
export function createUserGroupAdminService({
  store,
  view,
}: {
  store: Pick<UserGroupStore, 'listUserGroups' | 'findUserGroupByTeamId' | 'findUserGroupByProvidedId'>;
  view: UserGroupViewer;
}) {
  /** With its token only for a caller whose token is of the group's environment; the token is not even decrypted otherwise. */
  const present =
    (caller: Caller) =>
    (group: UserGroupRecord): UserGroupAdminView =>
      readsSecrets(caller) ? view(group) : userGroupFieldsView(group);

  return {
    async listUserGroups(caller: Caller, query: UserGroupListQuery): Promise<Page<UserGroupAdminView>> {
      requireScope(caller, 'admin');
      if (query.tag !== undefined) assertTag(query.tag, 'tag');
      return fetchPageWithinBytes(
        { limit: query.limit, after: query.afterTeamId, maxBytes: MAX_GROUP_PAGE_BYTES },
        (afterTeamId, limit) =>
          store.listUserGroups({
            ...query,
            tenant: caller.tenant,
            ...(afterTeamId === undefined ? {} : { afterTeamId }),
            limit,
          }),
        (group) => group.teamId,
        present(caller),
        (group) => Buffer.byteLength(JSON.stringify(group), 'utf8'),
      );
    },

    async getUserGroupByProvidedId(caller: Caller, providedId: string): Promise<UserGroupAdminView> {
      requireScope(caller, 'admin');
      const group = await store.findUserGroupByProvidedId(caller.tenant, providedId);
      if (!group) throw failure.userGroupNotFound(JSON.stringify(providedId));
      return present(caller)(group);
    },

    async getUserGroup(caller: Caller, teamId: number): Promise<UserGroupAdminView> {
      requireScope(caller, 'admin');
      const group = await store.findUserGroupByTeamId(caller.tenant, teamId);
      if (!group) throw failure.userGroupNotFound(`with team_id ${teamId}`);
      return present(caller)(group);
    },
  };
}
