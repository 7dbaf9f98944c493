// Sync with access rules (docs/api.md#sync-tenants-as-code): a sync line carries `access_rules` as get-or-create and PUT do — set on create,
// replaced on update, unchanged when absent, cleared by null — and a bad rule refuses the whole file,
// naming its line and the rule's field.
import { describe, expect, it } from 'vitest';
import { ADMIN, adminReader } from './admin-helpers.js';
import { expectUnchanged, seedSchema } from './helpers.js';
import { syncCall, syncOk } from './sync-helpers.js';
import { listAll } from '../support/paged-list.js';
import { uniqueId } from '../support/unique-id.js';
import { useTestApp } from '../support/test-app.js';
import type { UserGroup } from '../../src/wire/user-groups.schemas.js';

describe('POST /api/admin/user_groups/sync with access rules', () => {
  const fixture = useTestApp();

  const groupsTagged = (tag: string) =>
    listAll<UserGroup>(adminReader(fixture.t), ADMIN.userGroups, 'user_groups', { tag });

  it('creates, keeps, replaces and clears a group’s rules, and children inherit them', async () => {
    const { t } = fixture;
    const schemaId = await seedSchema(t);
    const [root, child, tag] = [uniqueId('sync-rules-root'), uniqueId('sync-rules-child'), uniqueId('tag')];
    const rule = { schema_id: schemaId, table: 'orders', column: 'tenant_id', op: 'eq', value: { property: 'tenant' } };
    const lines = [
      { user_group_id: root, tags: [tag], properties: { tenant: 'acme' }, access_rules: [rule] },
      { user_group_id: child, tags: [tag], parent_user_group_id: root },
    ];

    const created = await syncOk(t, lines);
    expect(created.summary).toEqual({ create: 2, update: 0, unchanged: 0, delete: 0 });
    expect(created.plan[0].changes.access_rules).toEqual({ before: null, after: [rule] });
    let [rootGroup, childGroup] = await groupsTagged(tag).then((groups) =>
      [root, child].map((id) => groups.find((group) => group.provided_id === id)!),
    );
    expect(rootGroup!.access_rules).toEqual([rule]);
    expect(childGroup!.access_rules).toEqual([]);
    expect(childGroup!.computed_access_rules).toEqual([{ ...rule, team_id: rootGroup!.team_id }]);

    // The same file again plans nothing; a file without the field leaves the rules as they are.
    expect((await syncOk(t, lines)).summary).toEqual({ create: 0, update: 0, unchanged: 2, delete: 0 });
    const withoutField = lines.map(({ access_rules: _rules, ...line }) => line);
    expect((await syncOk(t, withoutField)).summary).toEqual({ create: 0, update: 0, unchanged: 2, delete: 0 });

    const narrower = { ...rule, column: 'region', op: 'in', value: ['emea', 'apac'] };
    const replaced = await syncOk(t, [{ ...lines[0], access_rules: [narrower] }]);
    expect(replaced.summary).toEqual({ create: 0, update: 1, unchanged: 0, delete: 0 });
    expect(replaced.plan[0].changes.access_rules).toEqual({ before: [rule], after: [narrower] });
    [rootGroup, childGroup] = await groupsTagged(tag).then((groups) =>
      [root, child].map((id) => groups.find((group) => group.provided_id === id)!),
    );
    expect(childGroup!.computed_access_rules).toEqual([{ ...narrower, team_id: rootGroup!.team_id }]);

    await syncOk(t, [{ user_group_id: root, access_rules: null }]);
    const cleared = (await groupsTagged(tag)).find((group) => group.provided_id === root)!;
    expect(cleared.access_rules).toEqual([]);
  });

  it('refuses a file with one bad rule, naming its line and the rule’s field, and changes nothing', async () => {
    const { t } = fixture;
    const schemaId = await seedSchema(t);
    const good = { schema_id: schemaId, table: 'orders', column: 'tenant_id', op: 'eq', value: 'acme' };
    const cases: Array<[unknown, string]> = [
      [[{ ...good, column: 'tenant_id; DROP TABLE orders' }], 'access_rules[0].column'],
      [[good, { ...good, op: 'like' }], 'access_rules[1].op'],
      [[{ ...good, schema_id: 2_000_000_000 }], 'access_rules[0].schema_id'],
    ];
    for (const [rules, field] of cases) {
      const lines = [
        { user_group_id: uniqueId('sync-ok') },
        { user_group_id: uniqueId('sync-bad'), access_rules: rules },
      ];
      const response = await expectUnchanged(t, () => syncCall(t, lines));
      expect(response.status).toBe(400);
      expect(response.body.error.field).toBe(field);
      expect(response.body.error.line).toBe(2);
    }
    expect(cases).toHaveLength(3);
  });
});
