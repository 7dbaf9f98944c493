import { describe, expect, it } from 'vitest';
import type { UserGroupRecord } from '../../../src/domain/user-groups/user-group.records.js';
import type { Tenant } from '../../../src/domain/tenancy.js';
import { allPages, auditContext, createGroup } from '../store-fixtures.js';
import type { ContractContext } from './context.js';

/** [provided id, name] of the groups a search test starts from. */
type Seeds = readonly (readonly [string, string])[];

function inTeamIdOrder(groups: UserGroupRecord[]): UserGroupRecord[] {
  return [...groups].sort((a, b) => a.teamId - b.teamId);
}

export function describeUserGroupQueryContract(t: ContractContext): void {
  const createAll = async (tenant: Tenant, seeds: Seeds): Promise<UserGroupRecord[]> => {
    const groups: UserGroupRecord[] = [];
    for (const [providedId, name] of seeds) groups.push(await createGroup(t.store, tenant, providedId, { name }));
    return groups;
  };

  /** Provided ids of the customer groups that `search` finds, in the order listed. */
  const searchIds = async (search: string, tenant = t.fx.customer): Promise<string[]> =>
    (await t.store.listUserGroups({ tenant, search, limit: 1000 })).map((group) => group.providedId);

  describe('user groups: lookups by id', () => {
    it('findUserGroupsByProvidedIds returns the groups of the tenant that exist, each once', async () => {
      const { customer, testing, otherCustomer, schemaA, customerA } = t.fx;
      const mapping = [{ schemaId: schemaA.id, dataSourceId: customerA.id }];
      const [a, b] = [
        await createGroup(t.store, customer, 'a', { mapping }),
        await createGroup(t.store, customer, 'b'),
      ];
      await createGroup(t.store, customer, 'c');
      await createGroup(t.store, testing, 'only-testing');
      const found = await t.store.findUserGroupsByProvidedIds(customer, [
        'b',
        'missing',
        'a',
        'A',
        'a',
        'only-testing',
      ]);
      expect(inTeamIdOrder(found)).toEqual([a, b]);
      expect(await t.store.findUserGroupsByProvidedIds(customer, [])).toEqual([]);
      expect(await t.store.findUserGroupsByProvidedIds(testing, ['a', 'b'])).toEqual([]);
      expect(await t.store.findUserGroupsByProvidedIds(otherCustomer, ['a', 'b'])).toEqual([]);
    });

    it('findUserGroupByTeamId finds a group inside its tenant only', async () => {
      const { customer, testing, otherCustomer } = t.fx;
      const group = await createGroup(t.store, customer, 'g1', { properties: { a: 1 } });
      expect(await t.store.findUserGroupByTeamId(customer, group.teamId)).toEqual(group);
      expect(await t.store.findUserGroupByTeamId(testing, group.teamId)).toBeNull();
      expect(await t.store.findUserGroupByTeamId(otherCustomer, group.teamId)).toBeNull();
      expect(await t.store.findUserGroupByTeamId(customer, group.teamId + 1000)).toBeNull();
    });
  });

  describe('user groups: list', () => {
    it('lists the whole records of one tenant in team_id order, up to the limit', async () => {
      const { customer, testing, otherCustomer, schemaB, customerB } = t.fx;
      const mapping = [{ schemaId: schemaB.id, dataSourceId: customerB.id }];
      const groups = [
        await createGroup(t.store, customer, 'z', { mapping, properties: { x: [1, 2] } }),
        await createGroup(t.store, customer, 'a'),
      ];
      const testingGroup = await createGroup(t.store, testing, 'z');
      groups.push(await createGroup(t.store, customer, 'm'));
      await createGroup(t.store, otherCustomer, 'z');
      expect(await t.store.listUserGroups({ tenant: customer, limit: 100 })).toEqual(groups);
      expect(await t.store.listUserGroups({ tenant: customer, limit: 2 })).toEqual(groups.slice(0, 2));
      expect(await t.store.listUserGroups({ tenant: testing, limit: 100 })).toEqual([testingGroup]);
      const empty = { workspaceId: t.fx.otherWorkspace.id, environment: 'Testing' as const };
      expect(await t.store.listUserGroups({ tenant: empty, limit: 100 })).toEqual([]);
    });

    it('pages with the afterTeamId cursor cover every group exactly once, in order', async () => {
      const groups = await createAll(
        t.fx.customer,
        Array.from({ length: 11 }, (_, i) => [`g${i}`, `Group ${i}`] as const),
      );
      await createAll(t.fx.testing, [['g0', 'Group 0']]);
      const deleted = groups.splice(4, 1)[0]!;
      await t.store.deleteUserGroup(t.fx.customer, deleted.teamId, deleted.version, auditContext());
      for (const limit of [1, 3, 5, 10, 11]) {
        const pages = await allPages(
          limit,
          (afterTeamId) => t.store.listUserGroups({ tenant: t.fx.customer, afterTeamId, limit }),
          (last) => last.teamId,
        );
        expect(pages.flat()).toEqual(groups);
      }
      const last = groups.at(-1)!;
      expect(await t.store.listUserGroups({ tenant: t.fx.customer, afterTeamId: last.teamId, limit: 10 })).toEqual([]);
      const afterDeleted = await t.store.listUserGroups({
        tenant: t.fx.customer,
        afterTeamId: deleted.teamId,
        limit: 1,
      });
      expect(afterDeleted).toEqual([groups[4]]);
    });
  });

  describe('user groups: search', () => {
    it('matches a provided-id prefix with exact case, or a name substring in any case', async () => {
      await createAll(t.fx.customer, [
        ['acme-1', 'Alpha Widgets'],
        ['acme-2', 'Beta'],
        ['ACME-3', 'Gamma'],
        ['x-acme', 'Delta'],
        ['other', 'The ACME Corp'],
        ['plain', 'Epsilon'],
      ]);
      expect(await searchIds('acme')).toEqual(['acme-1', 'acme-2', 'other']);
      expect(await searchIds('ACME')).toEqual(['ACME-3', 'other']);
      expect(await searchIds('acme-1')).toEqual(['acme-1']);
      expect(await searchIds('wIdGeT')).toEqual(['acme-1']);
      // A provided id matches by prefix only, never in the middle.
      expect(await searchIds('cme')).toEqual(['other']);
      expect(await searchIds('-acme')).toEqual([]);
      expect(await searchIds('nothing like it')).toEqual([]);
    });

    it('folds the case of letters outside ASCII in names', async () => {
      await createAll(t.fx.customer, [
        ['zh', 'ZÜRICH Office'],
        ['ec', 'École Normale'],
        ['st', 'Straße Team'],
        ['gr', 'ΑΘΗΝΑ'],
        ['ascii', 'Plain Team'],
      ]);
      expect(await searchIds('zürich')).toEqual(['zh']);
      expect(await searchIds('ÉCOLE')).toEqual(['ec']);
      expect(await searchIds('école')).toEqual(['ec']);
      expect(await searchIds('team')).toEqual(['st', 'ascii']);
      expect(await searchIds('αθηνα')).toEqual(['gr']);
    });

    it('takes %, _ and backslash literally, never as wildcards or escapes', async () => {
      await createAll(t.fx.customer, [
        ['50%_off', 'Sale 50%_off'],
        ['5000', 'Model 5000'],
        ['a_b', 'Under_score'],
        ['axb', 'Axb Name'],
        ['aXb', 'Upper'],
        ['back\\slash', 'Back\\Slash'],
        ['bs', 'Backslash'],
        ['pct', 'Rabatt Ü% heute'],
        ['nopct', 'Rabatt Üx heute'],
      ]);
      expect(await searchIds('%')).toEqual(['50%_off', 'pct']);
      expect(await searchIds('50%')).toEqual(['50%_off']);
      expect(await searchIds('_')).toEqual(['50%_off', 'a_b']);
      expect(await searchIds('a_b')).toEqual(['a_b']);
      expect(await searchIds('r_s')).toEqual(['a_b']);
      expect(await searchIds('\\')).toEqual(['back\\slash']);
      expect(await searchIds('k\\s')).toEqual(['back\\slash']);
      expect(await searchIds('ü%')).toEqual(['pct']);
      expect(await searchIds('%_')).toEqual(['50%_off']);
    });

    it('folds mixed case outside ASCII in the search text, beside literal wildcards and escapes', async () => {
      await createAll(t.fx.customer, [
        ['umlaut', 'Büro ÄÖÜ Nord'],
        ['lower', 'büro äöü süd'],
        ['pct', 'Rabatt ÄÖ\\%_ heute'],
        ['äö-id', 'No Umlaut In Name'],
        ['ÄÖ-id', 'Plain'],
      ]);
      // By name in any case, by provided id with the exact case (and only as a prefix).
      expect(await searchIds('ÄÖ')).toEqual(['umlaut', 'lower', 'pct', 'ÄÖ-id']);
      expect(await searchIds('äÖ')).toEqual(['umlaut', 'lower', 'pct']);
      expect(await searchIds('äö')).toEqual(['umlaut', 'lower', 'pct', 'äö-id']);
      expect(await searchIds('Öü s')).toEqual(['lower']);
      expect(await searchIds('äö\\%_')).toEqual(['pct']);
      expect(await searchIds('ö\\%')).toEqual(['pct']);
      expect(await searchIds('ö\\_')).toEqual([]);
      expect(await searchIds('-id')).toEqual([]);
    });

    it('accepts a search text of any length', async () => {
      await createAll(t.fx.customer, [['a', 'a'.repeat(256)]]);
      expect(await searchIds('a'.repeat(256))).toEqual(['a']);
      expect(await searchIds('a'.repeat(60_000))).toEqual([]);
      expect(await searchIds('%'.repeat(60_000))).toEqual([]);
    });

    it('matches prefixes exactly for any characters, the highest code point included', async () => {
      const max = String.fromCodePoint(0x10ffff);
      await createAll(t.fx.customer, [
        ['ab', 'one'],
        [`ab${max}z`, 'two'],
        ['ac', 'three'],
        ['a', 'four'],
        [`a${max}`, 'five'],
        [`${max}${max}`, 'six'],
        ['日本語', 'seven'],
        ['日本', 'eight'],
      ]);
      expect(await searchIds('ab')).toEqual(['ab', `ab${max}z`]);
      expect(await searchIds(`a${max}`)).toEqual([`a${max}`]);
      expect(await searchIds(max)).toEqual([`${max}${max}`]);
      expect(await searchIds('a')).toEqual(['ab', `ab${max}z`, 'ac', 'a', `a${max}`]);
      expect(await searchIds('日本')).toEqual(['日本語', '日本']);
      expect(await searchIds('本')).toEqual([]);
    });

    it('pages through search results with the cursor, and stays inside the tenant', async () => {
      const seeds = Array.from({ length: 7 }, (_, i) => [`hit-${i}`, `Hit ${i}`] as const);
      const interleaved: (readonly [string, string])[] = seeds.flatMap((seed, i) => [
        seed,
        [`miss-${i}`, `Miss ${i}`] as const,
      ]);
      const groups = await createAll(t.fx.customer, interleaved);
      await createAll(t.fx.testing, [['hit-x', 'Hit x']]);
      await createAll(t.fx.otherCustomer, [['hit-y', 'Hit y']]);
      const hits = groups.filter((group) => group.providedId.startsWith('hit-'));
      const pages = await allPages(
        3,
        (afterTeamId) => t.store.listUserGroups({ tenant: t.fx.customer, search: 'hit', afterTeamId, limit: 3 }),
        (last) => last.teamId,
      );
      expect(pages.flat()).toEqual(hits);
      expect(await searchIds('hit', t.fx.testing)).toEqual(['hit-x']);
      expect(await searchIds('hit', t.fx.otherCustomer)).toEqual(['hit-y']);
      expect(await searchIds('Hit x')).toEqual([]);
    });
  });
}
