import { beforeAll, describe, expect, it } from 'vitest';
import type { Environment } from '../../src/domain/tenancy.js';
import type { TestApp } from '../support/test-app.js';
import {
  ADMIN,
  adminCall,
  adminOk,
  adminReader,
  PAGING_QUERY_ERRORS,
  teamIds,
  userGroupAsUserApiShowsIt,
} from './admin-helpers.js';
import { collectPages, listAll, type Query } from '../support/paged-list.js';
import { expectError, seedCatalog } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { adminCaller, type As } from '../support/callers.js';
import { makeGroup } from '../support/group-maker.js';
import { useTestApp } from '../support/test-app.js';

const byTeamId = (teamId: number | string) => `${ADMIN.userGroups}/${teamId}`;

/** Seeds `count` groups in `environment`, one after the other, so their team_ids ascend. */
async function seedGroups(t: TestApp, count: number, environment: Environment, prefix: string): Promise<number[]> {
  const created: number[] = [];
  for (let i = 0; i < count; i += 1)
    created.push((await makeGroup(t, { id: `${prefix}${i}`, as: { environment } })).team_id);
  return created;
}

describe('GET /api/admin/user_groups: a whole environment, page by page', () => {
  // An app of its own: its environments hold exactly the groups made here.
  const ctx = useTestApp();
  const groups: Record<Environment, number[]> = { Customer: [], Testing: [] };

  beforeAll(async () => {
    groups.Customer = await seedGroups(ctx.t, 25, 'Customer', 'customer-');
    groups.Testing = await seedGroups(ctx.t, 3, 'Testing', 'testing-');
  });

  it('pages of 10 cover all 25 groups exactly once, in team_id order; only the last next_cursor is null', async () => {
    const { pages, items, cursors } = await collectPages(adminReader(ctx.t), ADMIN.userGroups, 'user_groups', {
      limit: 10,
    });
    expect(pages.map((page) => page.length)).toEqual([10, 10, 5]);
    expect(cursors.map((cursor) => typeof cursor)).toEqual(['string', 'string', 'object']);
    expect(cursors[2]).toBeNull();
    expect(teamIds(items)).toEqual(groups.Customer);
  });

  it.each<[string, Query, number[]]>([
    ['no limit (default 100)', {}, [25]],
    ['limit 1000', { limit: 1000 }, [25]],
    ['a limit the groups fill exactly (no empty last page)', { limit: 25 }, [25]],
    ['limit 24', { limit: 24 }, [24, 1]],
    ['limit 1', { limit: 1 }, Array<number>(25).fill(1)],
  ])('%s gives pages of %j and every group once', async (_label, query, sizes) => {
    const { pages, items } = await collectPages(adminReader(ctx.t), ADMIN.userGroups, 'user_groups', query);
    expect(pages.map((page) => page.length)).toEqual(sizes);
    expect(teamIds(items)).toEqual(groups.Customer);
  });

  it.each<[Environment, Query, Environment]>([
    ['Customer', {}, 'Customer'],
    ['Testing', {}, 'Testing'],
    ['Customer', { environment: 'Testing' }, 'Testing'],
    ['Testing', { environment: 'Customer' }, 'Customer'],
    ['Testing', { environment: 'Testing' }, 'Testing'],
  ])('a %s admin with %j lists the %s groups', async (tokenEnvironment, query, listed) => {
    const items = await listAll(
      adminReader(ctx.t, { environment: tokenEnvironment }),
      ADMIN.userGroups,
      'user_groups',
      query,
    );
    expect(teamIds(items)).toEqual(groups[listed]);
    expect(items.every((group: { api_environment_tag: string }) => group.api_environment_tag === listed)).toBe(true);
  });

  it('a cursor stays valid while groups come and go: none is skipped or repeated', async () => {
    const first = await adminOk(ctx.t, { path: ADMIN.userGroups, query: { limit: 10 } });
    const late = await makeGroup(ctx.t, { id: uniqueId('late') });
    // A group of the page already read goes away: the pages after it must not shift.
    await ctx.t.runtime.services.userGroups.deleteUserGroup(await adminCaller(ctx.t), { userGroupId: 'customer-3' });
    const rest = await collectPages(adminReader(ctx.t), ADMIN.userGroups, 'user_groups', {
      limit: 10,
      cursor: first.next_cursor,
    });
    expect([...teamIds(first.user_groups), ...teamIds(rest.items)]).toEqual([...groups.Customer, late.team_id]);
  });
});

describe('the admin user group API', () => {
  const ctx = useTestApp();

  describe('GET /api/admin/user_groups?q=', () => {
    /** Groups of one search key; each label says whether q=<key> must find it. */
    const fixture: Record<string, { team_id: number }> = {};
    let key = '';

    beforeAll(async () => {
      // The trailing dot keeps `key` from being a prefix of another test's ids (k-1. vs k-12.).
      key = `${uniqueId('k')}.`;
      const seeds: Array<[string, { id?: string; name?: string; as?: As }]> = [
        ['id prefix', { id: `${key}alpha`, name: 'Alpha' }],
        ['exact id', { id: key, name: 'Exact' }],
        ['id in the middle', { id: `x.${key}middle`, name: 'Middle' }],
        ['name, other case', { name: `Team ${key.toUpperCase()} East` }],
        ['name, same case', { name: `team ${key} west` }],
        ['name, accented', { name: `ÉQUIPE ${key}` }],
        ['name with key_ literally', { name: `under ${key}_score` }],
        ['name with keyX', { name: `not ${key}Xscore` }],
        ['name with key%', { name: `per ${key}%cent` }],
        ['in Testing', { id: `${key}testing`, name: key, as: { environment: 'Testing' } }],
      ];
      for (const [label, input] of seeds) fixture[label] = await makeGroup(ctx.t, input);
    });

    const KEY_MATCHES = [
      'id prefix',
      'exact id',
      'name, other case',
      'name, same case',
      'name, accented',
      'name with key_ literally',
      'name with keyX',
      'name with key%',
    ];
    const found = (...labels: string[]) => labels.map((label) => fixture[label]!.team_id).sort((a, b) => a - b);

    it.each<[string, (key: string) => string, (key: string) => Query, string[]]>([
      ['the key', (k) => k, () => ({}), KEY_MATCHES],
      [
        'a name part in upper case',
        (k) => `TEAM ${k.toUpperCase()}`,
        () => ({}),
        ['name, other case', 'name, same case'],
      ],
      ['a name part in lower case', (k) => `team ${k}`, () => ({}), ['name, other case', 'name, same case']],
      ['an accented name in lower case', (k) => `équipe ${k}`, () => ({}), ['name, accented']],
      ['a longer id prefix', (k) => `${k}al`, () => ({}), ['id prefix']],
      ['the middle of an id', (k) => `${k}middle`, () => ({}), []],
      ['an underscore, literally', (k) => `${k}_`, () => ({}), ['name with key_ literally']],
      ['a percent sign, literally', (k) => `${k}%`, () => ({}), ['name with key%']],
      ['the key in Testing', (k) => k, () => ({ environment: 'Testing' }), ['in Testing']],
    ])('q = %s finds exactly its groups, in team_id order', async (_label, q, extra, expected) => {
      const items = await listAll(adminReader(ctx.t), ADMIN.userGroups, 'user_groups', { q: q(key), ...extra(key) });
      expect(teamIds(items)).toEqual(found(...expected));
    });

    it('pages through search results too', async () => {
      const { pages, items } = await collectPages(adminReader(ctx.t), ADMIN.userGroups, 'user_groups', {
        q: key,
        limit: 3,
      });
      expect(pages.map((page) => page.length)).toEqual([3, 3, 2]);
      expect(teamIds(items)).toEqual(found(...KEY_MATCHES));
    });
  });

  it('lists every group whole, as /api/user shows it', async () => {
    const catalog = await seedCatalog(ctx.t);
    const { provided_id: id } = await makeGroup(ctx.t, {
      name: uniqueId('Whole'),
      properties: { tier: 'gold', seats: [1, 2] },
      mapping: { [catalog.schemaA]: catalog.dsA.id },
    });
    const listed = (await listAll(adminReader(ctx.t), ADMIN.userGroups, 'user_groups', { q: id })).find(
      (group: { provided_id: string }) => group.provided_id === id,
    );
    expect(listed).toStrictEqual(await userGroupAsUserApiShowsIt(ctx.t, id));
    expect(listed).toMatchObject({
      properties: { tier: 'gold', seats: [1, 2] },
      mapping: { [catalog.schemaA]: String(catalog.dsA.id) },
    });
  });

  it.each<[string, Query, string, string]>([
    ...PAGING_QUERY_ERRORS,
    ['an empty q', { q: '' }, 'invalid_field', 'q'],
    ['a q of 257 characters', { q: 'x'.repeat(257) }, 'invalid_field', 'q'],
  ])('refuses %s (%j): 400 %s naming %s', async (_label, query, code, field) => {
    expectError(await adminCall(ctx.t, { path: ADMIN.userGroups, query }), 400, code, field);
  });

  describe('GET /api/admin/user_groups/{team_id}', () => {
    it.each<[Environment, Environment, Query]>([
      ['Customer', 'Customer', {}],
      ['Testing', 'Testing', {}],
      ['Customer', 'Testing', { environment: 'Testing' }],
      ['Testing', 'Customer', { environment: 'Customer' }],
    ])(
      'a %s admin gets a %s group as /api/user shows it, its token only in its own environment (%j)',
      async (tokenEnvironment, environment, query) => {
        // The catalogue helper seeds Customer data sources: only a Customer group can map to them.
        const catalog = environment === 'Customer' ? await seedCatalog(ctx.t) : undefined;
        const mapping = catalog && { [catalog.schemaA]: catalog.dsA.id };
        const group = await makeGroup(ctx.t, {
          name: 'Shown whole',
          properties: { region: 'eu' },
          mapping,
          as: { environment },
        });
        const body = await adminOk(ctx.t, {
          path: byTeamId(group.team_id),
          query,
          as: { environment: tokenEnvironment },
        });
        expect(Object.keys(body).sort()).toEqual(['success', 'user_group']);
        const shown = await userGroupAsUserApiShowsIt(ctx.t, group.provided_id, { environment });
        // Across environments the group comes without its token (docs/api.md#the-admin-api).
        const { token: _token, ...withoutToken } = shown;
        expect(body.user_group).toStrictEqual(tokenEnvironment === environment ? shown : withoutToken);
        expect(body.user_group).toMatchObject({
          team_id: group.team_id,
          name: 'Shown whole',
          properties: { region: 'eu' },
          api_environment_tag: environment,
        });
      },
    );

    it.each<[string, () => Promise<number>, Query]>([
      [
        'a Testing group asked for by a Customer token',
        async () => (await makeGroup(ctx.t, { as: { environment: 'Testing' } })).team_id,
        {},
      ],
      [
        'a Customer group asked for in Testing',
        async () => (await makeGroup(ctx.t)).team_id,
        { environment: 'Testing' },
      ],
      ["another workspace's group", async () => (await makeGroup(ctx.t, { as: { workspace: 'other' } })).team_id, {}],
      ['a deleted group', deletedGroup, {}],
      ['a team_id never issued', async () => 999_999_999, {}],
    ])('%s is 404 user_group_not_found', async (_label, teamId, query) => {
      expectError(await adminCall(ctx.t, { path: byTeamId(await teamId()), query }), 404, 'user_group_not_found', null);
    });

    async function deletedGroup(): Promise<number> {
      const group = await makeGroup(ctx.t);
      await ctx.t.runtime.services.userGroups.deleteUserGroup(await adminCaller(ctx.t), {
        userGroupId: group.provided_id,
      });
      return group.team_id;
    }

    it.each<[string, string, Query, string, string]>([
      ['a word as team_id', 'abc', {}, 'invalid_field', 'team_id'],
      ['team_id 0', '0', {}, 'invalid_field', 'team_id'],
      ['a negative team_id', '-1', {}, 'invalid_field', 'team_id'],
      ['a fractional team_id', '1.5', {}, 'invalid_field', 'team_id'],
      ['a team_id beyond the safe integers', '12345678901234567', {}, 'invalid_field', 'team_id'],
      ['an unknown environment', '1', { environment: 'Production' }, 'invalid_field', 'environment'],
      ['an unknown parameter', '1', { q: 'x' }, 'unknown_field', 'q'],
    ])('refuses %s (%s, %j): 400 %s naming %s', async (_label, teamId, query, code, field) => {
      expectError(await adminCall(ctx.t, { path: byTeamId(teamId), query }), 400, code, field);
    });
  });

  it("another workspace's admin sees none of this workspace's groups", async () => {
    const home = await Promise.all(
      (['Customer', 'Testing'] as const).map((environment) =>
        makeGroup(ctx.t, { id: uniqueId('home'), as: { environment } }),
      ),
    );
    const other: As = { workspace: 'other' };
    const homeTeamIds = home.map((group) => group.team_id);
    for (const environment of ['Customer', 'Testing'] as const) {
      const listed = teamIds(
        await listAll(adminReader(ctx.t, other), ADMIN.userGroups, 'user_groups', { environment }),
      );
      expect(listed.filter((teamId) => homeTeamIds.includes(teamId))).toEqual([]);
      for (const group of home) {
        expect(
          await listAll(adminReader(ctx.t, other), ADMIN.userGroups, 'user_groups', {
            environment,
            q: group.provided_id,
          }),
        ).toEqual([]);
        expectError(
          await adminCall(ctx.t, { path: byTeamId(group.team_id), query: { environment }, as: other }),
          404,
          'user_group_not_found',
          null,
        );
      }
    }
  });
});
