// Hierarchy, demo groups and tags (docs/api.md#hierarchy-demo-groups-and-tags) over HTTP: trees with inherited properties and mappings, demo groups and tags.
import { decodeJwt } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TransferredUserGroup } from '../../src/domain/user-groups/user-group-transfer.service.js';
import { ADMIN, adminOk } from './admin-helpers.js';
import { expectSuccess, seedCatalog, TRANSPORTS, useClient, type Catalog } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { adminCaller, apiToken } from '../support/callers.js';
import { userGroupApi } from '../support/user-group-api.js';
import { useTestApp } from '../support/test-app.js';

for (const transport of TRANSPORTS) {
  describe(`group trees over ${transport.name}`, () => {
    const fixture = useClient(transport);
    let catalog: Catalog;
    const api = () => userGroupApi(fixture.client, apiToken(fixture.t, { scope: 'write' }));
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const group = async (id: string): Promise<any> =>
      expectSuccess(await api().getOrCreate({ user_group_id: id })).user_group;

    beforeAll(async () => {
      catalog = await seedCatalog(fixture.t);
    });

    /** root → region → country → city under fresh ids; the mapping of schema A is overridden at country. */
    const fourLevels = async () => {
      const ids = {
        root: uniqueId('root'),
        region: uniqueId('region'),
        country: uniqueId('country'),
        city: uniqueId('city'),
      };
      const other = await fixture.t.runtime.services.dataSources.createDataSource(
        {
          tenant: { workspaceId: fixture.t.runtime.defaultWorkspace.id, environment: 'Customer' },
          scope: 'admin',
          actor: { type: 'cli' },
          requestId: null,
        },
        { providedId: uniqueId('ds'), name: 'Override', schemaId: catalog.schemaA },
      );
      const create = async (body: Record<string, unknown>) => expectSuccess(await api().getOrCreate(body)).user_group;
      await create({
        user_group_id: ids.root,
        properties: { plan: 'pro', region: 'none', tier: 1 },
        mapping: { [catalog.schemaA]: catalog.dsA.id, [catalog.schemaB]: catalog.dsB.id },
      });
      await create({
        user_group_id: ids.region,
        parent_user_group_id: ids.root,
        properties: { region: 'emea', tier: 2 },
      });
      await create({
        user_group_id: ids.country,
        parent_user_group_id: ids.region,
        mapping: { [catalog.schemaA]: other.providedId },
      });
      const city = await create({
        user_group_id: ids.city,
        parent_user_group_id: ids.country,
        properties: { tier: 4, city: 'Lyon' },
      });
      return { ids, city, other };
    };

    it('inherits properties and mapping through four levels, the nearer level winning', async () => {
      const { ids, city, other } = await fourLevels();
      expect(city).toMatchObject({
        parent_user_group_id: ids.country,
        properties: { tier: 4, city: 'Lyon' },
        mapping: {},
        computed_properties: { plan: 'pro', region: 'emea', tier: 4, city: 'Lyon' },
        computed_mapping: { [catalog.schemaA]: String(other.id), [catalog.schemaB]: String(catalog.dsB.id) },
        is_demo_group: false,
        tags: [],
      });
      expect(await group(ids.region)).toMatchObject({
        parent_user_group_id: ids.root,
        computed_properties: { plan: 'pro', region: 'emea', tier: 2 },
      });
      expect(await group(ids.root)).toMatchObject({
        parent_user_group_id: null,
        computed_properties: { plan: 'pro', region: 'none', tier: 1 },
      });
    });

    it('shows a change to an ancestor in every descendant on the next read, through every read path', async () => {
      const { ids, city } = await fourLevels();
      expectSuccess(
        await api().update({ user_group_id: ids.root, properties: { plan: 'enterprise', region: 'none', tier: 1 } }),
      );
      expect((await group(ids.city)).computed_properties).toMatchObject({ plan: 'enterprise', region: 'emea' });
      const verified = expectSuccess(await api().verify(city.token)).user_group;
      expect(verified.computed_properties.plan).toBe('enterprise');
      const byTeamId = await adminOk(fixture.t, { path: `${ADMIN.userGroups}/${city.team_id}` });
      expect(byTeamId.user_group.computed_properties.plan).toBe('enterprise');
      // A rename of the parent keeps the link and shows the new id.
      const renamed = uniqueId('country-renamed');
      expectSuccess(await api().update({ user_group_id: ids.country, new_user_group_id: renamed }));
      expect((await group(ids.city)).parent_user_group_id).toBe(renamed);
    });

    it('moves and detaches a group, and deletes a parent once its children are gone', async () => {
      const { ids } = await fourLevels();
      const moved = expectSuccess(
        await api().update({ user_group_id: ids.city, parent_user_group_id: ids.root }),
      ).user_group;
      expect(moved).toMatchObject({ parent_user_group_id: ids.root, computed_properties: { region: 'none', tier: 4 } });
      const detached = expectSuccess(
        await api().update({ user_group_id: ids.city, parent_user_group_id: null }),
      ).user_group;
      expect(detached).toMatchObject({ parent_user_group_id: null, computed_properties: { tier: 4, city: 'Lyon' } });
      for (const id of [ids.country, ids.region, ids.root])
        expect(expectSuccess(await api().remove({ user_group_id: id }))).toEqual({ success: 1 });
    });

    it('round-trips the demo flag and tags: sorted, replaced whole by PUT, untouched by get-or-create of an existing group', async () => {
      const id = uniqueId('tagged');
      const created = expectSuccess(
        await api().getOrCreate({ user_group_id: id, is_demo_group: true, tags: ['pilot', 'EU', 'émea', '🚀', 'eu'] }),
      ).user_group;
      expect(created).toMatchObject({ is_demo_group: true, tags: ['EU', 'eu', 'pilot', 'émea', '🚀'] });
      const again = expectSuccess(
        await api().getOrCreate({ user_group_id: id, is_demo_group: false, tags: ['other'] }),
      );
      expect(again).toMatchObject({ new_user_group: false, user_group: { is_demo_group: true, tags: created.tags } });
      const updated = expectSuccess(await api().update({ user_group_id: id, tags: ['b', 'a'] })).user_group;
      expect(updated).toMatchObject({ is_demo_group: true, tags: ['a', 'b'] });
      expect(
        expectSuccess(await api().update({ user_group_id: id, is_demo_group: false, tags: [] })).user_group,
      ).toMatchObject({ is_demo_group: false, tags: [] });
    });

    it('filters the admin list by parent, tag and demo flag, with paging', async () => {
      const parent = uniqueId('parent');
      const tag = uniqueId('tag');
      expectSuccess(await api().getOrCreate({ user_group_id: parent, tags: [tag] }));
      const children = [];
      for (let i = 0; i < 5; i += 1) {
        const child = uniqueId(`child${i}`);
        expectSuccess(
          await api().getOrCreate({
            user_group_id: child,
            parent_user_group_id: parent,
            is_demo_group: i % 2 === 0,
            tags: i < 2 ? [tag] : [],
          }),
        );
        children.push(child);
      }
      const list = async (query: Record<string, string | number>) => {
        const found: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await adminOk(fixture.t, {
            path: ADMIN.userGroups,
            query: { ...query, limit: 2, ...(cursor ? { cursor } : {}) },
          });
          found.push(...page.user_groups.map((item: { provided_id: string }) => item.provided_id));
          cursor = page.next_cursor ?? undefined;
        } while (cursor);
        return found;
      };
      expect(await list({ parent })).toEqual(children);
      expect(await list({ parent, is_demo_group: 'true' })).toEqual([children[0], children[2], children[4]]);
      expect(await list({ parent, is_demo_group: 'false' })).toEqual([children[1], children[3]]);
      expect(await list({ tag })).toEqual([parent, children[0], children[1]]);
      expect(await list({ parent: uniqueId('nobody') })).toEqual([]);
    });

    it('audits parent, tag and demo changes with before and after', async () => {
      const parent = uniqueId('audit-parent');
      const id = uniqueId('audited');
      expectSuccess(await api().getOrCreate({ user_group_id: parent }));
      const created = expectSuccess(
        await api().getOrCreate({ user_group_id: id, parent_user_group_id: parent, tags: ['x'] }),
      ).user_group;
      expectSuccess(
        await api().update({ user_group_id: id, parent_user_group_id: null, is_demo_group: true, tags: ['y', 'x'] }),
      );
      const events = (await adminOk(fixture.t, { path: ADMIN.auditEvents, query: { team_id: created.team_id } }))
        .audit_events;
      expect(events.map((event: { action: string; changes: unknown }) => [event.action, event.changes])).toEqual([
        [
          'user_group.updated',
          {
            parent_user_group_id: { before: parent, after: null },
            is_demo_group: { before: false, after: true },
            tags: { before: ['x'], after: ['x', 'y'] },
          },
        ],
        [
          'user_group.created',
          expect.objectContaining({
            parent_user_group_id: { before: null, after: parent },
            tags: { before: null, after: ['x'] },
          }),
        ],
      ]);
    });

    it('puts the computed values and the demo flag into embed tokens', async () => {
      const { ids, other } = await fourLevels();
      expectSuccess(await api().update({ user_group_id: ids.city, is_demo_group: true }));
      const minted = expectSuccess(
        await fixture.client({
          method: 'POST',
          path: '/api/user/embed_token',
          token: apiToken(fixture.t, { scope: 'write' }),
          // Per-view values only add keys (docs/api.md#embed-tokens): `tier`, which an ancestor sets, may not be overridden.
          body: { user_group_id: ids.city, properties: { view: 9 } },
        }),
      );
      const { ugs } = decodeJwt(minted.embed_token) as { ugs: Record<string, unknown> };
      expect(ugs).toMatchObject({
        properties: { plan: 'pro', region: 'emea', view: 9, city: 'Lyon' },
        mapping: { [catalog.schemaA]: String(other.id), [catalog.schemaB]: String(catalog.dsB.id) },
        is_demo_group: true,
      });
    });
  });
}

describe('a tree through export and import, on this engine', () => {
  const holder = useTestApp();

  it('imports an exported tree in reversed order into another workspace: parents first, the same tree', async () => {
    const { t } = holder;
    const transfer = t.runtime.services.userGroupTransfer;
    const source = await adminCaller(t);
    const target = await adminCaller(t, { workspace: 'other' });
    const prefix = uniqueId('tree');
    const groups = t.runtime.services.userGroups;
    await groups.getOrCreateUserGroup(source, {
      userGroupId: `${prefix}-root`,
      properties: { plan: 'pro' },
      tags: ['eu'],
    });
    await groups.getOrCreateUserGroup(source, {
      userGroupId: `${prefix}-a`,
      parentUserGroupId: `${prefix}-root`,
      isDemoGroup: true,
    });
    await groups.getOrCreateUserGroup(source, {
      userGroupId: `${prefix}-b`,
      parentUserGroupId: `${prefix}-a`,
      properties: { seats: 3 },
    });
    await groups.getOrCreateUserGroup(source, {
      userGroupId: `${prefix}-c`,
      parentUserGroupId: `${prefix}-b`,
      tags: ['z', 'a'],
    });

    const exported: TransferredUserGroup[] = [];
    for await (const line of transfer.exportUserGroups(source, { includeTokens: false }))
      if (String(line.provided_id).startsWith(prefix)) exported.push(line);
    expect(exported).toHaveLength(4);
    const lines = [...exported].reverse().map((group, index) => ({ line: index + 1, group }));
    // A batch of one line: every child waits for a parent written in a later batch or round.
    expect(await transfer.importUserGroups(target, lines, { batchSize: 1 })).toEqual({
      created: 4,
      updated: 0,
      unchanged: 0,
      rejected: [],
      lacking: [],
      lacking_lines: 0,
      lacking_fields: {},
      supplemented: 0,
    });
    expect(await transfer.importUserGroups(target, lines)).toEqual({
      created: 0,
      updated: 0,
      unchanged: 4,
      rejected: [],
      lacking: [],
      lacking_lines: 0,
      lacking_fields: {},
      supplemented: 0,
    });

    const imported: TransferredUserGroup[] = [];
    for await (const line of transfer.exportUserGroups(target, { includeTokens: false }))
      if (String(line.provided_id).startsWith(prefix)) imported.push(line);
    const comparable = (items: typeof exported) =>
      items.map(({ provided_id, parent_user_group_id, properties, is_demo_group, tags }) => ({
        provided_id,
        parent_user_group_id,
        properties,
        is_demo_group,
        tags,
      }));
    expect(comparable(imported).sort((x, y) => String(x.provided_id).localeCompare(String(y.provided_id)))).toEqual(
      comparable(exported).sort((x, y) => String(x.provided_id).localeCompare(String(y.provided_id))),
    );
    const deepest = await t.runtime.services.userGroupAdmin.getUserGroupByProvidedId(target, `${prefix}-c`);
    expect(deepest).toMatchObject({
      parentProvidedId: `${prefix}-b`,
      computedProperties: { plan: 'pro', seats: 3 },
      tags: ['a', 'z'],
    });
  });
});
