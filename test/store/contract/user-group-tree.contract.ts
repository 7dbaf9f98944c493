import { describe, expect, it } from 'vitest';
import type { UserGroupPatch, UserGroupRecord } from '../../../src/domain/user-groups/user-group.records.js';
import type { Store } from '../../../src/domain/store.port.js';
import { auditContext, createGroup, expectAppError, newGroup, T1 } from '../store-fixtures.js';
import type { ContractContext } from './context.js';

/** Updates `group` as last read, through `store` (another instance, in the engine-specific suites). */
export const updateThrough = (store: Store, group: UserGroupRecord, patch: UserGroupPatch) =>
  store.updateUserGroup(
    {
      tenant: { workspaceId: group.workspaceId, environment: group.environment },
      teamId: group.teamId,
      expectedVersion: group.version,
      patch,
      updatedAt: T1,
    },
    auditContext(),
  );

/**
 * Two writes race to make A the parent of B and B the parent of A, `rounds` times: exactly one of
 * each pair may win (the other is a cycle), and no group ever ends up its own ancestor.
 */
export async function raceForCycle(
  stores: [Store, Store],
  tenant: ContractContext['fx']['customer'],
  rounds: number,
): Promise<void> {
  for (let round = 0; round < rounds; round += 1) {
    const a = await createGroup(stores[0], tenant, `race-a-${round}`);
    const b = await createGroup(stores[0], tenant, `race-b-${round}`);
    const outcomes = await Promise.allSettled([
      updateThrough(stores[0], a, { parentProvidedId: b.providedId }),
      updateThrough(stores[1], b, { parentProvidedId: a.providedId }),
    ]);
    const refused = outcomes
      .filter((outcome) => outcome.status === 'rejected')
      .map((outcome) => (outcome as PromiseRejectedResult).reason as { code?: string });
    expect(refused.map((error) => error.code)).toEqual(['hierarchy_cycle']);
    const [aNow, bNow] = [
      await stores[1].findUserGroupByTeamId(tenant, a.teamId),
      await stores[1].findUserGroupByTeamId(tenant, b.teamId),
    ];
    // One is the parent of the other, never both.
    const links = [aNow?.parentProvidedId ?? null, bNow?.parentProvidedId ?? null];
    expect(links.filter((link) => link !== null)).toHaveLength(1);
    expect(links[0] === b.providedId || links[1] === a.providedId).toBe(true);
  }
}

/** A chain of `levels` groups under fresh ids, root first; returns the deepest. */
export async function createChain(
  store: Store,
  tenant: ContractContext['fx']['customer'],
  levels: number,
): Promise<UserGroupRecord> {
  let group: UserGroupRecord | undefined;
  for (let level = 1; level <= levels; level += 1) {
    group = await createGroup(store, tenant, `chain-${level}-${Math.random().toString(36).slice(2)}`, {
      parentProvidedId: group?.providedId ?? null,
      properties: { level },
    });
  }
  if (!group) throw new Error('a chain has at least one level');
  return group;
}

export function describeUserGroupTreeContract(t: ContractContext): void {
  const create = (providedId: string, overrides: Parameters<typeof createGroup>[3] = {}) =>
    createGroup(t.store, t.fx.customer, providedId, overrides);
  const find = async (providedId: string) => {
    const group = await t.store.findUserGroupByProvidedId(t.fx.customer, providedId);
    if (!group) throw new Error(`${providedId} is missing`);
    return group;
  };

  /** root → region → country → city, each with properties and (for two levels) a mapping. */
  const fourLevels = async () => {
    const { schemaA, schemaB, customerA, customerB } = t.fx;
    await create('root', {
      properties: { plan: 'pro', region: 'none', level: 1 },
      mapping: [{ schemaId: schemaA.id, dataSourceId: customerA.id }],
    });
    await create('region', { parentProvidedId: 'root', properties: { region: 'emea', level: 2 } });
    await create('country', {
      parentProvidedId: 'region',
      properties: null,
      mapping: [{ schemaId: schemaB.id, dataSourceId: customerB.id }],
    });
    return create('city', { parentProvidedId: 'country', properties: { level: 4 } });
  };

  describe('user groups: hierarchy', () => {
    it('reads a group at depth 4 with its three ancestors, nearest first, each with properties and mapping', async () => {
      const { schemaA, schemaB, customerA, customerB } = t.fx;
      const city = await fourLevels();
      expect(city.parentProvidedId).toBe('country');
      const [country, region, root] = [await find('country'), await find('region'), await find('root')];
      const expected = [
        {
          teamId: country.teamId,
          properties: null,
          mapping: [{ schemaId: schemaB.id, dataSourceId: customerB.id }],
          accessRules: [],
        },
        { teamId: region.teamId, properties: { region: 'emea', level: 2 }, mapping: [], accessRules: [] },
        {
          teamId: root.teamId,
          properties: { plan: 'pro', region: 'none', level: 1 },
          mapping: [{ schemaId: schemaA.id, dataSourceId: customerA.id }],
          accessRules: [],
        },
      ];
      expect(city.ancestors).toEqual(expected);
      // Every lookup brings them: by provided id, token hash, team id, several ids and the list.
      expect(await find('city')).toEqual(city);
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, city.tokenHash)).toEqual(city);
      expect(await t.store.findUserGroupByTeamId(t.fx.customer, city.teamId)).toEqual(city);
      expect(await t.store.findUserGroupsByProvidedIds(t.fx.customer, ['city'])).toEqual([city]);
      expect((await t.store.listUserGroups({ tenant: t.fx.customer, parent: 'country', limit: 10 }))[0]).toEqual(city);
      expect((await find('root')).ancestors).toEqual([]);
    });

    it("shows an ancestor's change in its descendants at once, and keeps links through renames", async () => {
      await fourLevels();
      await updateThrough(t.store, await find('root'), {
        properties: { plan: 'enterprise' },
        providedId: 'root-renamed',
      });
      const city = await find('city');
      expect(city.ancestors[2]?.properties).toEqual({ plan: 'enterprise' });
      await updateThrough(t.store, await find('country'), { providedId: 'country-renamed' });
      expect((await find('city')).parentProvidedId).toBe('country-renamed');
      expect((await find('region')).parentProvidedId).toBe('root-renamed');
    });

    it('refuses an unknown parent, also one of another tenant, and writes nothing', async () => {
      await createGroup(t.store, t.fx.testing, 'elsewhere');
      await expectAppError(create('orphan', { parentProvidedId: 'nobody' }), 'unknown_parent', 'parent_user_group_id');
      await expectAppError(
        create('orphan', { parentProvidedId: 'elsewhere' }),
        'unknown_parent',
        'parent_user_group_id',
      );
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'orphan')).toBeNull();
      const group = await create('g1');
      await expectAppError(
        updateThrough(t.store, group, { parentProvidedId: 'nobody', name: 'changed' }),
        'unknown_parent',
        'parent_user_group_id',
      );
      expect(await find('g1')).toEqual(group);
    });

    it('refuses a cycle: the group itself, its child or a deeper descendant as its parent', async () => {
      await fourLevels();
      for (const parent of ['root', 'region', 'city']) {
        const root = await find('root');
        await expectAppError(
          updateThrough(t.store, root, { parentProvidedId: parent }),
          'hierarchy_cycle',
          'parent_user_group_id',
        );
        expect(await find('root')).toEqual(root);
      }
      await expectAppError(
        updateThrough(t.store, await find('region'), { parentProvidedId: 'country' }),
        'hierarchy_cycle',
      );
    });

    it('refuses a fifth level, by create or by moving a subtree, and allows exactly four', async () => {
      await fourLevels();
      await expectAppError(
        create('street', { parentProvidedId: 'city' }),
        'hierarchy_too_deep',
        'parent_user_group_id',
      );
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'street')).toBeNull();
      // A two-level subtree fits under region (levels 3 and 4), not under country.
      await create('branch');
      await create('leaf', { parentProvidedId: 'branch' });
      await expectAppError(
        updateThrough(t.store, await find('branch'), { parentProvidedId: 'country' }),
        'hierarchy_too_deep',
      );
      const moved = await updateThrough(t.store, await find('branch'), { parentProvidedId: 'region' });
      expect(moved?.parentProvidedId).toBe('region');
      expect((await find('leaf')).ancestors).toHaveLength(3);
    });

    it('detaches with null', async () => {
      await fourLevels();
      const detached = await updateThrough(t.store, await find('country'), { parentProvidedId: null });
      expect(detached).toMatchObject({ parentProvidedId: null, ancestors: [] });
      expect((await find('city')).ancestors).toHaveLength(1);
    });

    it('refuses to delete a group with children, with their count, and deletes it once they are gone', async () => {
      await fourLevels();
      await create('sibling', { parentProvidedId: 'country' });
      const country = await find('country');
      expect(await t.store.deleteUserGroup(t.fx.customer, country.teamId, country.version, auditContext())).toEqual({
        status: 'has_children',
        children: 2,
      });
      expect(await find('country')).toEqual(country);
      for (const child of ['city', 'sibling']) {
        const group = await find(child);
        expect(await t.store.deleteUserGroup(t.fx.customer, group.teamId, group.version, auditContext())).toEqual({
          status: 'deleted',
        });
      }
      expect(await t.store.deleteUserGroup(t.fx.customer, country.teamId, country.version, auditContext())).toEqual({
        status: 'deleted',
      });
    });

    it('stores the demo flag and tags, and filters the list by parent, tag and demo flag', async () => {
      await create('a', { isDemoGroup: true, tags: ['eu', 'pilot'] });
      await create('b', { parentProvidedId: 'a', tags: ['eu'] });
      await create('c', { parentProvidedId: 'a', isDemoGroup: true });
      const ids = async (query: { parent?: string; tag?: string; isDemoGroup?: boolean }) =>
        (await t.store.listUserGroups({ tenant: t.fx.customer, limit: 100, ...query })).map(
          (group) => group.providedId,
        );
      expect(await find('a')).toMatchObject({ isDemoGroup: true, tags: ['eu', 'pilot'] });
      expect(await ids({ parent: 'a' })).toEqual(['b', 'c']);
      expect(await ids({ parent: 'nobody' })).toEqual([]);
      expect(await ids({ tag: 'eu' })).toEqual(['a', 'b']);
      expect(await ids({ tag: 'e' })).toEqual([]);
      expect(await ids({ isDemoGroup: true })).toEqual(['a', 'c']);
      expect(await ids({ isDemoGroup: false, tag: 'eu' })).toEqual(['b']);
      const updated = await updateThrough(t.store, await find('a'), { isDemoGroup: false, tags: [] });
      expect(updated).toMatchObject({ isDemoGroup: false, tags: [] });
    });

    it('writes a batch whose children follow their parents, and refuses the whole batch when a parent is missing', async () => {
      await t.store.applyUserGroupWrites(
        t.fx.customer,
        ['p', 'q', 'r'].map((id, index, all) => ({
          kind: 'create',
          group: newGroup(t.fx.customer, id, { parentProvidedId: index === 0 ? null : (all[index - 1] ?? null) }),
          changes: {},
        })),
        auditContext(),
        { policy: 'per_batch' },
      );
      expect((await find('r')).ancestors).toHaveLength(2);
      await expectAppError(
        t.store.applyUserGroupWrites(
          t.fx.customer,
          [{ kind: 'create', group: newGroup(t.fx.customer, 's', { parentProvidedId: 'missing' }), changes: {} }],
          auditContext(),
          { policy: 'per_batch' },
        ),
        'unknown_parent',
      );
    });

    it('lets only one of two racing parent links through when they would form a cycle', async () => {
      await raceForCycle([t.store, t.store], t.fx.customer, 25);
    });
  });
}
