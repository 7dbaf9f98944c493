import { expect } from 'vitest';
import type { JsonObject } from '../../src/domain/common.records.js';
import { presentUserGroup } from '../../src/wire/user-group.presenter.js';
import type { UserGroup } from '../../src/wire/user-groups.schemas.js';
import { adminCaller, type As } from './callers.js';
import type { Target } from './http-client.js';
import type { TestApp } from './test-app.js';
import { uniqueId } from './unique-id.js';
import { getOrCreate } from './user-group-api.js';

export type { UserGroup };

export interface GroupInput {
  /** The user_group_id; a fresh `group-<n>` unless given. */
  id?: string;
  name?: string;
  properties?: JsonObject;
  mapping?: Record<string, number | string>;
  /** Through the services only: whose workspace and environment (default workspace, Customer). Through the API the token decides. */
  as?: Omit<As, 'scope'>;
}

/** Through the API: GET /api/user to `target` with a write (or admin) API token. */
export interface ThroughApi {
  target: Target;
  token: string;
}

/**
 * Makes a new user group and returns it as the API shows it. Given a test app, through its services,
 * acting as the CLI does (setup behind the API's back: the audit trail names the CLI); given a target
 * and a token, through GET /api/user, asserting a 200 that created it (for processes, or tests of the
 * API's own path). Fails when the group existed already.
 */
export async function makeGroup(via: TestApp | ThroughApi, input: GroupInput = {}): Promise<UserGroup> {
  const id = input.id ?? uniqueId('group');
  const fields = {
    ...(input.name === undefined ? {} : { name: input.name }),
    ...(input.properties === undefined ? {} : { properties: input.properties }),
    ...(input.mapping === undefined ? {} : { mapping: input.mapping }),
  };
  if ('token' in via) {
    if (input.as !== undefined) throw new Error('makeGroup through the API: the token says where, not `as`');
    const response = await getOrCreate(via.target, via.token, { user_group_id: id, ...fields });
    expect(response.status, response.raw).toBe(200);
    expect(response.body.new_user_group).toBe(true);
    return response.body.user_group as UserGroup;
  }
  const { userGroup, created } = await via.runtime.services.userGroups.getOrCreateUserGroup(
    await adminCaller(via, input.as),
    { userGroupId: id, ...fields },
  );
  if (!created) throw new Error(`makeGroup: the group ${id} existed already`);
  return presentUserGroup(userGroup);
}
