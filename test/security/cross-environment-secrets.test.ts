// An admin token reads the metadata of both environments of its
// workspace, but a group's token only with a token of the group's own environment.
import { describe, expect, it } from 'vitest';
import { ADMIN, adminCall } from '../http/admin-helpers.js';
import { expectSuccess } from '../http/helpers.js';
import { makeGroup } from '../support/group-maker.js';
import { useTestApp } from '../support/test-app.js';

describe("a group's token across environments", () => {
  const fixture = useTestApp();

  it('is left out of lists and views read with the other environment’s admin token, and shown with its own', async () => {
    const customer = await makeGroup(fixture.t);
    const testing = await makeGroup(fixture.t, { as: { environment: 'Testing' } });
    for (const [group, own, other] of [
      [customer, 'Customer', 'Testing'],
      [testing, 'Testing', 'Customer'],
    ] as const) {
      const across = { as: { environment: other }, query: { environment: own } } as const;
      const list = await adminCall(fixture.t, {
        path: ADMIN.userGroups,
        ...across,
        query: { ...across.query, q: group.provided_id },
      });
      const view = await adminCall(fixture.t, { path: `${ADMIN.userGroups}/${group.team_id}`, ...across });
      const listed = expectSuccess(list).user_groups;
      expect(listed.map((entry: { team_id: number }) => entry.team_id)).toEqual([group.team_id]);
      expect(listed[0]).not.toHaveProperty('token');
      expect(expectSuccess(view).user_group).toMatchObject({ team_id: group.team_id, provided_id: group.provided_id });
      expect(expectSuccess(view).user_group).not.toHaveProperty('token');
      for (const res of [list, view]) expect(res.raw).not.toContain(group.token);

      const home = { as: { environment: own }, query: { environment: own } } as const;
      const ownList = expectSuccess(
        await adminCall(fixture.t, { path: ADMIN.userGroups, ...home, query: { ...home.query, q: group.provided_id } }),
      ).user_groups;
      expect(ownList[0].token).toBe(group.token);
      expect(
        expectSuccess(await adminCall(fixture.t, { path: `${ADMIN.userGroups}/${group.team_id}`, ...home })).user_group
          .token,
      ).toBe(group.token);
    }
  });
});
