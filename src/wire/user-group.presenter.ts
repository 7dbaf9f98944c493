import type { UserGroupAdminView, UserGroupView } from '../domain/user-groups/user-group.view.js';
import type { AdminUserGroup, UserGroup } from './user-groups.schemas.js';

/** The wire form of a group: what every response that carries one shows, and what the CLI prints. */
export function presentUserGroup(view: UserGroupView): UserGroup {
  const { team_id, ...fields } = presentUserGroupFields(view);
  return { team_id, token: view.token, ...fields };
}

/** The admin API's wire form: the token only when the view has it (not across environments). */
export function presentAdminUserGroup(view: UserGroupAdminView): AdminUserGroup {
  const { team_id, ...fields } = presentUserGroupFields(view);
  return { team_id, ...(view.token === undefined ? {} : { token: view.token }), ...fields };
}

/** The wire form without the token: what a webhook event shows. */
export function presentUserGroupFields(view: Omit<UserGroupView, 'token'>): Omit<UserGroup, 'token'> {
  return {
    team_id: view.teamId,
    name: view.name,
    provided_id: view.providedId,
    properties: view.properties,
    mapping: view.mapping,
    parent_user_group_id: view.parentProvidedId,
    computed_properties: view.computedProperties,
    computed_mapping: view.computedMapping,
    is_demo_group: view.isDemoGroup,
    tags: view.tags,
    access_rules: view.accessRules,
    computed_access_rules: view.computedAccessRules,
    api_environment_tag: view.environment,
    created_at: view.createdAt,
    updated_at: view.updatedAt,
  };
}
