// The refusals of the hierarchy (docs/api.md#hierarchy-demo-groups-and-tags) over HTTP: each a clear error that changes nothing.
import { describe, expect, it } from 'vitest';
import { ADMIN, adminCall } from './admin-helpers.js';
import { expectError, expectSuccess, snapshotDatabase, TRANSPORTS, useClient } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { adminCaller, apiToken } from '../support/callers.js';
import { userGroupApi } from '../support/user-group-api.js';
import { useTestApp } from '../support/test-app.js';

for (const transport of TRANSPORTS) {
  describe(`group tree refusals over ${transport.name}`, () => {
    const fixture = useClient(transport);
    const api = () => userGroupApi(fixture.client, apiToken(fixture.t, { scope: 'write' }));

    /** A chain of `levels` groups, root first; returns their ids. */
    const chain = async (levels: number) => {
      const ids: string[] = [];
      for (let level = 0; level < levels; level += 1) {
        const id = uniqueId(`level${level + 1}`);
        expectSuccess(
          await api().getOrCreate({
            user_group_id: id,
            ...(level > 0 ? { parent_user_group_id: ids[level - 1] } : {}),
          }),
        );
        ids.push(id);
      }
      return ids as [string, string, string, string];
    };

    /** Sends the request, expects the error, and checks that the database did not change. */
    const refusedWithoutChange = async (
      send: () => ReturnType<ReturnType<typeof api>['update']>,
      status: number,
      code: string,
      field?: string | null,
    ) => {
      const before = await snapshotDatabase(fixture.t);
      expectError(await send(), status, code, field);
      expect(await snapshotDatabase(fixture.t)).toEqual(before);
    };

    it('refuses an unknown parent on create and on update (400 unknown_parent), also one of the other environment or workspace', async () => {
      const testing = uniqueId('testing');
      expectSuccess(
        await userGroupApi(fixture.client, apiToken(fixture.t, { scope: 'write', environment: 'Testing' })).getOrCreate(
          { user_group_id: testing },
        ),
      );
      const otherWorkspace = uniqueId('other-workspace');
      expectSuccess(
        await userGroupApi(fixture.client, apiToken(fixture.t, { scope: 'write', workspace: 'other' })).getOrCreate({
          user_group_id: otherWorkspace,
        }),
      );
      for (const parent of [uniqueId('nobody'), testing, otherWorkspace, 12345]) {
        await refusedWithoutChange(
          () => api().getOrCreate({ user_group_id: uniqueId('orphan'), parent_user_group_id: parent }),
          400,
          'unknown_parent',
          'parent_user_group_id',
        );
      }
      const [root] = await chain(1);
      await refusedWithoutChange(
        () => api().update({ user_group_id: root, name: 'never', parent_user_group_id: uniqueId('nobody') }),
        400,
        'unknown_parent',
        'parent_user_group_id',
      );
    });

    it('refuses a cycle (409 hierarchy_cycle): the group itself, a child, a deeper descendant', async () => {
      const [root, second, , fourth] = await chain(4);
      for (const parent of [root, second, fourth]) {
        await refusedWithoutChange(
          () => api().update({ user_group_id: root, parent_user_group_id: parent }),
          409,
          'hierarchy_cycle',
          'parent_user_group_id',
        );
      }
    });

    it('refuses a fifth level (409 hierarchy_too_deep), by create and by moving a subtree', async () => {
      const levels = await chain(4);
      await refusedWithoutChange(
        () => api().getOrCreate({ user_group_id: uniqueId('fifth'), parent_user_group_id: levels[3] }),
        409,
        'hierarchy_too_deep',
        'parent_user_group_id',
      );
      const [subtreeRoot] = await chain(2);
      await refusedWithoutChange(
        () => api().update({ user_group_id: subtreeRoot, parent_user_group_id: levels[2] }),
        409,
        'hierarchy_too_deep',
        'parent_user_group_id',
      );
    });

    it('refuses to delete a group that has children (409 user_group_has_children), by id or by token, under every path', async () => {
      const [root, child] = await chain(2);
      const rootGroup = expectSuccess(await api().getOrCreate({ user_group_id: root })).user_group;
      await refusedWithoutChange(() => api().remove({ user_group_id: root }), 409, 'user_group_has_children', null);
      await refusedWithoutChange(
        () => api().remove({ current_token: rootGroup.token }),
        409,
        'user_group_has_children',
        null,
      );
      await refusedWithoutChange(
        () =>
          fixture.client({
            method: 'DELETE',
            path: '/api/delete_user_group/',
            token: apiToken(fixture.t, { scope: 'write' }),
            body: { user_group_id: root },
          }),
        409,
        'user_group_has_children',
        null,
      );
      expectSuccess(await api().remove({ user_group_id: child }));
      expectSuccess(await api().remove({ user_group_id: root }));
    });

    const invalidTags: Array<[string, unknown]> = [
      ['33 tags', Array.from({ length: 33 }, (_, i) => `t${i}`)],
      ['a tag twice', ['a', 'b', 'a']],
      ['an empty tag', ['']],
      ['a tag of 65 characters', ['x'.repeat(65)]],
      ['a control character', ['a\nb']],
      ['a number', [1]],
      ['a string instead of an array', 'a,b'],
      ['null', null],
    ];
    for (const [label, tags] of invalidTags) {
      it(`refuses tags with ${label} (400 invalid_field "tags") on create and update`, async () => {
        const [root] = await chain(1);
        await refusedWithoutChange(
          () => api().getOrCreate({ user_group_id: uniqueId('tags'), tags }),
          400,
          'invalid_field',
          'tags',
        );
        await refusedWithoutChange(() => api().update({ user_group_id: root, tags }), 400, 'invalid_field', 'tags');
      });
    }

    it('accepts exactly 32 tags of 64 characters (code points, not UTF-16 units)', async () => {
      const tags = Array.from({ length: 32 }, (_, i) => `${String(i).padStart(2, '0')}${'🚀'.repeat(62)}`);
      expect(
        expectSuccess(await api().getOrCreate({ user_group_id: uniqueId('many-tags'), tags })).user_group.tags,
      ).toEqual(tags);
    });

    it('refuses a demo flag or a parent of the wrong type', async () => {
      for (const value of ['true', 1, null]) {
        await refusedWithoutChange(
          () => api().getOrCreate({ user_group_id: uniqueId('demo'), is_demo_group: value }),
          400,
          'invalid_field',
          'is_demo_group',
        );
      }
      for (const value of [true, { id: 'x' }, '', 'a\u0000b']) {
        await refusedWithoutChange(
          () => api().getOrCreate({ user_group_id: uniqueId('parent'), parent_user_group_id: value }),
          400,
          'invalid_field',
          'parent_user_group_id',
        );
      }
    });

    it('refuses bad list filters', async () => {
      for (const [query, field] of [
        [{ is_demo_group: 'yes' }, 'is_demo_group'],
        [{ tag: 'x'.repeat(65) }, 'tag'],
        [{ parent: '' }, 'parent'],
      ] as const) {
        expectError(await adminCall(fixture.t, { path: ADMIN.userGroups, query }), 400, 'invalid_field', field);
      }
    });
  });
}

describe('a parent deleted while a child is linked under it', () => {
  const holder = useTestApp();

  it('lets exactly one of the two through, 30 times: never a child under a deleted parent, never another error', async () => {
    const { t } = holder;
    const caller = await adminCaller(t);
    const groups = t.runtime.services.userGroups;
    for (let round = 0; round < 30; round += 1) {
      const parent = uniqueId(`race-parent-${round}`);
      const child = uniqueId(`race-child-${round}`);
      await groups.getOrCreateUserGroup(caller, { userGroupId: parent });
      // Staggered from the create 3 ms ahead to the delete 6 ms ahead (a create under a parent takes
      // a few round trips more than a delete), so that they overlap at every point and each side wins
      // sometimes, on either engine.
      const stagger = (round % 10) - 3;
      const after = <T>(ms: number, work: () => Promise<T>) =>
        new Promise((resolve) => setTimeout(resolve, ms)).then(work);
      const [deleted, created] = await Promise.allSettled([
        after(Math.max(0, stagger), () => groups.deleteUserGroup(caller, { userGroupId: parent })),
        after(Math.max(0, -stagger), () =>
          groups.getOrCreateUserGroup(caller, { userGroupId: child, parentUserGroupId: parent }),
        ),
      ]);
      const codeOf = (outcome: PromiseSettledResult<unknown>) =>
        outcome.status === 'rejected' ? (outcome.reason as { code?: string }).code : 'ok';
      const outcome = [codeOf(deleted), codeOf(created)];
      expect([
        ['ok', 'unknown_parent'],
        ['user_group_has_children', 'ok'],
      ]).toContainEqual(outcome);
      const childNow = await t.runtime.store.findUserGroupByProvidedId(caller.tenant, child);
      const parentNow = await t.runtime.store.findUserGroupByProvidedId(caller.tenant, parent);
      if (outcome[0] === 'ok') expect([parentNow, childNow]).toEqual([null, null]);
      else expect(childNow?.parentProvidedId).toBe(parent);
    }
  });
});
