import { describe, expect, it } from 'vitest';
import type { SyncAuditContext, SyncWrite } from '../../../src/domain/user-group-sync/user-group-sync.port.js';
import type { InputPosition } from '../../../src/domain/errors.js';
import { isAppError } from '../../../src/domain/errors.js';
import type {
  NewUserGroup,
  UserGroupPatch,
  UserGroupRecord,
} from '../../../src/domain/user-groups/user-group.records.js';
import { API_ACTOR, auditWrittenBy, createGroup, expectAppError, newGroup, T0, T1, T2 } from '../store-fixtures.js';
import type { ContractContext } from './context.js';
import { addEndpoint, claimAt } from './webhook-fixtures.js';

export function describeUserGroupSyncContract(t: ContractContext): void {
  const context = (syncId: string): SyncAuditContext => ({ at: T2, actor: API_ACTOR, requestId: 'sync-1', syncId });

  const create = (
    providedId: string,
    line: number,
    parentProvidedId: string | null = null,
    group: Partial<NewUserGroup> = {},
  ): SyncWrite => ({
    kind: 'create',
    at: { line },
    group: newGroup(t.fx.customer, providedId, { parentProvidedId, ...group }),
    changes: { provided_id: { before: null, after: providedId } },
  });
  const update = (
    group: UserGroupRecord,
    line: number,
    name: string,
    expectedVersion = group.version,
    patch: UserGroupPatch = { name },
  ): SyncWrite => ({
    kind: 'update',
    at: { line },
    update: { tenant: t.fx.customer, teamId: group.teamId, expectedVersion, patch, updatedAt: T1 },
    changes: { name: { before: group.name, after: name } },
  });
  const remove = (group: UserGroupRecord): SyncWrite => ({
    kind: 'delete',
    tenant: t.fx.customer,
    teamId: group.teamId,
    providedId: group.providedId,
    expectedVersion: group.version,
    changes: { provided_id: { before: group.providedId, after: null } },
  });

  const snapshot = async () => ({
    customer: await t.store.listUserGroups({ tenant: t.fx.customer, limit: 1000 }),
    audit: await t.store.listAuditEvents({ workspaceId: t.fx.workspace.id, limit: 1000 }),
  });

  /** Applies steps that must be refused with `code`, naming `at`, and checks that nothing changed. */
  const expectRefused = async (steps: SyncWrite[], code: string, at?: InputPosition) => {
    const before = await snapshot();
    const error: unknown = await t.store
      .applyUserGroupWrites(t.fx.customer, steps, context('sync_refused'), { policy: 'all_or_nothing' })
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect(isAppError(error) && error.code).toBe(code);
    if (isAppError(error)) expect(error.at).toEqual(at);
    expect(await snapshot()).toEqual(before);
  };

  describe('user groups: sync apply', () => {
    it('creates, updates and deletes in order, each with an audit event carrying the sync id', async () => {
      const kept = await createGroup(t.store, t.fx.customer, 'kept');
      const parent = await createGroup(t.store, t.fx.customer, 'old-parent');
      const child = await createGroup(t.store, t.fx.customer, 'old-child', { parentProvidedId: 'old-parent' });
      const steps = [
        create('root', 1),
        create('leaf', 2, 'root'),
        update(kept, 3, 'Kept, renamed'),
        remove({ ...child, version: (await t.store.findUserGroupByTeamId(t.fx.customer, child.teamId))!.version }),
        remove(parent),
      ];
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, () =>
        t.store.applyUserGroupWrites(t.fx.customer, steps, context('sync_one'), { policy: 'all_or_nothing' }),
      );
      expect(events.map((event) => [event.action, event.providedId, event.syncId, event.requestId])).toEqual([
        ['user_group.created', 'root', 'sync_one', 'sync-1'],
        ['user_group.created', 'leaf', 'sync_one', 'sync-1'],
        ['user_group.updated', 'kept', 'sync_one', 'sync-1'],
        ['user_group.deleted', 'old-child', 'sync_one', 'sync-1'],
        ['user_group.deleted', 'old-parent', 'sync_one', 'sync-1'],
      ]);
      const leaf = await t.store.findUserGroupByProvidedId(t.fx.customer, 'leaf');
      expect(leaf).toMatchObject({ parentProvidedId: 'root', ancestors: [{ properties: null, mapping: [] }] });
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'kept')).toMatchObject({ name: 'Kept, renamed' });
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'old-parent')).toBeNull();
      // Other changes carry no sync id.
      expect(
        (await auditWrittenBy(t.store, t.fx.workspace.id, () => createGroup(t.store, t.fx.customer, 'solo')))[0],
      ).toMatchObject({ syncId: null });
    });

    it('writes nothing when a step fails, naming the line of the step', async () => {
      const kept = await createGroup(t.store, t.fx.customer, 'kept');
      await createGroup(t.store, t.fx.customer, 'exists');
      // A create whose provided id exists by now.
      await expectRefused([create('new-1', 1), create('exists', 2)], 'concurrent_change', { line: 2 });
      // An update of a row that moved on.
      await expectRefused([create('new-1', 1), update(kept, 4, 'X', kept.version + 5)], 'concurrent_change', {
        line: 4,
      });
      // A parent that does not exist.
      await expectRefused([create('new-1', 1), create('orphan', 2, 'nobody')], 'unknown_parent', { line: 2 });
    });

    it('writes creates and updates of names, flags, tags and mappings together as one by one: links, subjects', async () => {
      const schemaA = { schemaId: t.fx.schemaA.id, dataSourceId: t.fx.customerA.id };
      const schemaB = { schemaId: t.fx.schemaB.id, dataSourceId: t.fx.customerB.id };
      const parent = await createGroup(t.store, t.fx.customer, 'parent', {
        properties: { region: 'emea' },
        mapping: [schemaA],
      });
      const kept = await createGroup(t.store, t.fx.customer, 'kept');
      await addEndpoint(t.store, t.fx.customer, ['user_group.created', 'user_group.updated']);
      await t.store.applyUserGroupWrites(
        t.fx.customer,
        [
          update(parent, 1, 'Parent', parent.version, { name: 'Parent', mapping: [schemaB], tags: ['fleet'] }),
          update(kept, 2, 'Kept', kept.version, { isDemoGroup: true }),
          create('child', 3, 'parent', { properties: { seats: 5 }, mapping: [schemaA], tags: ['a', 'b'] }),
          create('grandchild', 4, 'child'),
          create('root', 5, null, { isDemoGroup: true, accessRules: [] }),
        ],
        context('sync_run'),
        { policy: 'all_or_nothing' },
      );
      const find = async (providedId: string) => (await t.store.findUserGroupByProvidedId(t.fx.customer, providedId))!;
      expect(await find('parent')).toMatchObject({
        name: 'Parent',
        mapping: [schemaB],
        tags: ['fleet'],
        properties: { region: 'emea' },
        version: parent.version + 1,
        updatedAt: T1,
      });
      expect(await find('kept')).toMatchObject({ name: kept.name, isDemoGroup: true, version: kept.version + 1 });
      expect(await find('child')).toMatchObject({
        parentProvidedId: 'parent',
        properties: { seats: 5 },
        mapping: [schemaA],
        tags: ['a', 'b'],
        ancestors: [{ teamId: parent.teamId, properties: { region: 'emea' }, mapping: [schemaB] }],
        createdAt: T0,
      });
      expect((await find('grandchild')).ancestors.map((ancestor) => ancestor.properties)).toEqual([
        { seats: 5 },
        { region: 'emea' },
      ]);
      expect(await find('root')).toMatchObject({ parentProvidedId: null, isDemoGroup: true, ancestors: [] });
      // Each webhook subject is the group as its step left it (none of these is changed by a later step).
      const claimed = await claimAt(t.store, 'worker', T2);
      const subjects = claimed.map(({ event }) => event.subject);
      const expected = await Promise.all(
        ['parent', 'kept', 'child', 'grandchild', 'root'].map(async (providedId) => {
          const { tokenHash: _hash, tokenCiphertext: _ciphertext, ...userGroup } = await find(providedId);
          return { kind: 'user_group', userGroup };
        }),
      );
      expect(subjects).toEqual(expected);
      expect(claimed.map(({ event }) => event.syncId)).toEqual(Array(5).fill('sync_run'));
    });

    it("refuses at the first step at fault in the plan's order, whichever check it fails, naming its line", async () => {
      const kept = await createGroup(t.store, t.fx.customer, 'kept');
      await createGroup(t.store, t.fx.customer, 'l1');
      await createGroup(t.store, t.fx.customer, 'l2', { parentProvidedId: 'l1' });
      await createGroup(t.store, t.fx.customer, 'l3', { parentProvidedId: 'l2' });
      await createGroup(t.store, t.fx.customer, 'l4', { parentProvidedId: 'l3' });
      await createGroup(t.store, t.fx.customer, 'heavy', { properties: { a: 'x'.repeat(40_000) } });
      const moved = kept.version + 5;
      await expectRefused([create('new-1', 1), create('too-deep', 2, 'l4')], 'hierarchy_too_deep', { line: 2 });
      await expectRefused(
        [create('new-1', 1), create('heavier', 2, 'heavy', { properties: { b: 'y'.repeat(40_000) } })],
        'invalid_field',
        { line: 2 },
      );
      const rules = (count: number) =>
        Array.from({ length: count }, (_, n) => ({
          schema_id: t.fx.schemaA.id,
          table: 'orders',
          column: `c${n}`,
          op: 'eq' as const,
          value: n,
        }));
      await createGroup(t.store, t.fx.customer, 'ruled', { accessRules: rules(64) });
      await createGroup(t.store, t.fx.customer, 'ruled-child', { parentProvidedId: 'ruled', accessRules: rules(60) });
      await expectRefused(
        [create('new-1', 1), create('over-ruled', 2, 'ruled-child', { accessRules: rules(5) })],
        'invalid_field',
        { line: 2 },
      );
      await expectRefused([create('orphan', 1, 'nobody'), update(kept, 2, 'X', moved)], 'unknown_parent', { line: 1 });
      await expectRefused([update(kept, 1, 'X', moved), create('orphan', 2, 'nobody')], 'concurrent_change', {
        line: 1,
      });
      await expectRefused([create('kept', 1, 'l1'), create('orphan', 2, 'nobody')], 'concurrent_change', { line: 1 });
      // A create whose provided id exists by now is that, whatever its parent.
      await expectRefused([create('new-1', 1), create('kept', 2, 'nobody')], 'concurrent_change', { line: 2 });
      // A create under a group the same sync creates just before it, which is too deep by then.
      await expectRefused([create('l5', 1, 'l3'), create('l6', 2, 'l5')], 'hierarchy_too_deep', { line: 2 });
    });

    it('refuses to delete a group that still has children, writing nothing', async () => {
      const parent = await createGroup(t.store, t.fx.customer, 'parent');
      await createGroup(t.store, t.fx.customer, 'child', { parentProvidedId: 'parent' });
      await expectRefused([create('new-1', 1), remove(parent)], 'user_group_has_children');
    });

    it('applies two syncs of one tenant one after the other: the second, planned on the old rows, is refused', async () => {
      const group = await createGroup(t.store, t.fx.customer, 'raced');
      const outcomes = await Promise.allSettled([
        t.store.applyUserGroupWrites(t.fx.customer, [update(group, 1, 'First')], context('sync_a'), {
          policy: 'all_or_nothing',
        }),
        t.store.applyUserGroupWrites(t.fx.customer, [update(group, 1, 'Second')], context('sync_b'), {
          policy: 'all_or_nothing',
        }),
      ]);
      expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
      const rejected = outcomes.find((outcome) => outcome.status === 'rejected');
      await expectAppError(Promise.reject(rejected?.reason), 'concurrent_change');
      const events = await t.store.listAuditEvents({
        workspaceId: t.fx.workspace.id,
        action: 'user_group.updated',
        limit: 10,
      });
      expect(events).toHaveLength(1);
    });
  });

  describe('user groups: what a sync plan reads', () => {
    it('lists the children of many groups in one call, in team_id order, within the tenant only', async () => {
      const a = await createGroup(t.store, t.fx.customer, 'a');
      const b = await createGroup(t.store, t.fx.customer, 'b');
      await createGroup(t.store, t.fx.customer, 'lonely');
      const a1 = await createGroup(t.store, t.fx.customer, 'a1', { parentProvidedId: 'a' });
      const b1 = await createGroup(t.store, t.fx.customer, 'b1', { parentProvidedId: 'b' });
      const a2 = await createGroup(t.store, t.fx.customer, 'a2', { parentProvidedId: 'a' });
      // A grandchild is not a child; another tenant's groups are not listed, even under a team id asked for.
      await createGroup(t.store, t.fx.customer, 'b1x', { parentProvidedId: 'b1' });
      const elsewhere = await createGroup(t.store, t.fx.testing, 'a');
      await createGroup(t.store, t.fx.testing, 'a9', { parentProvidedId: 'a' });
      const link = (group: UserGroupRecord, parent: UserGroupRecord) => ({
        teamId: group.teamId,
        providedId: group.providedId,
        parentTeamId: parent.teamId,
      });
      const lonely = await t.store.findUserGroupByProvidedId(t.fx.customer, 'lonely');
      expect(await t.store.listUserGroupChildren(t.fx.customer, [b.teamId, a.teamId, lonely!.teamId, 999_999])).toEqual(
        [link(a1, a), link(b1, b), link(a2, a)],
      );
      expect(await t.store.listUserGroupChildren(t.fx.customer, [])).toEqual([]);
      expect(await t.store.listUserGroupChildren(t.fx.customer, [elsewhere.teamId])).toEqual([]);
      // Many parents at once (a prune of thousands asks in one call).
      const many = Array.from({ length: 2000 }, (_, i) => 1_000_000 + i);
      expect(await t.store.listUserGroupChildren(t.fx.customer, [...many, b1.teamId])).toEqual([
        expect.objectContaining({ providedId: 'b1x', parentTeamId: b1.teamId }),
      ]);
    });

    it('lists the links of the groups carrying a tag, a page at a time, within the tenant only', async () => {
      const root = await createGroup(t.store, t.fx.customer, 'root', { tags: ['managed'] });
      await createGroup(t.store, t.fx.customer, 'untagged', { tags: ['other'] });
      const child = await createGroup(t.store, t.fx.customer, 'child', {
        parentProvidedId: 'root',
        tags: ['a', 'managed'],
      });
      const third = await createGroup(t.store, t.fx.customer, 'third', { tags: ['managed'] });
      await createGroup(t.store, t.fx.testing, 'elsewhere', { tags: ['managed'] });
      const all = await t.store.listTaggedUserGroupLinks(t.fx.customer, 'managed', { limit: 10 });
      expect(all).toEqual([
        { teamId: root.teamId, providedId: 'root', parentTeamId: null },
        { teamId: child.teamId, providedId: 'child', parentTeamId: root.teamId },
        { teamId: third.teamId, providedId: 'third', parentTeamId: null },
      ]);
      const first = await t.store.listTaggedUserGroupLinks(t.fx.customer, 'managed', { limit: 2 });
      expect(first).toEqual(all.slice(0, 2));
      expect(
        await t.store.listTaggedUserGroupLinks(t.fx.customer, 'managed', { afterTeamId: child.teamId, limit: 2 }),
      ).toEqual(all.slice(2));
      // A tag is matched whole.
      expect(await t.store.listTaggedUserGroupLinks(t.fx.customer, 'manage', { limit: 10 })).toEqual([]);
    });
  });
}
