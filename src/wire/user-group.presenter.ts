import type { UserGroupAdminView, UserGroupView } from '../domain/user-groups/user-group.view.js';
import type { AdminUserGroup, UserGroup } from './user-groups.schemas.js';

/**
 * The wire form with the token in its place (second, as every response and the CLI show it), built as
 * one object literal: every read presents a group, and copies through rest and spread cost each read
 * two more objects of sixteen fields (docs/performance-history.md).
 */
function wireGroup(view: Omit<UserGroupView, 'token'>, token: string | undefined): AdminUserGroup {
  return {
    team_id: view.teamId,
    token,
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

/** The wire form of a group: what every response that carries one shows, and what the CLI prints. */
export function presentUserGroup(view: UserGroupView): UserGroup {
  return wireGroup(view, view.token) as UserGroup;
}

/** The admin API's wire form: the token only when the view has it (not across environments). */
export function presentAdminUserGroup(view: UserGroupAdminView): AdminUserGroup {
  const group = wireGroup(view, view.token);
  if (view.token === undefined) delete group.token;
  return group;
}

/** The wire form without the token: what a webhook event shows. */
export function presentUserGroupFields(view: Omit<UserGroupView, 'token'>): Omit<UserGroup, 'token'> {
  const { token: _token, ...fields } = wireGroup(view, undefined);
  return fields;
}
