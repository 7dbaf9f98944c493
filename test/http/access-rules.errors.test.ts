// The refusals of access rules (docs/api.md#access-rules) over HTTP: every malformed rule, every bound, an unknown schema, each a clear
// error naming the exact field, and the database exactly as it was before the refused write.
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, seedSchema, snapshotDatabase, TRANSPORTS, useClient } from './helpers.js';
import { apiToken } from '../support/callers.js';
import { userGroupApi } from '../support/user-group-api.js';
import type { ApiResponse } from '../support/http-client.js';
import { uniqueId } from '../support/unique-id.js';

for (const transport of TRANSPORTS) {
  describe(`access rule refusals over ${transport.name}`, () => {
    const fixture = useClient(transport);
    const api = () => userGroupApi(fixture.client, apiToken(fixture.t, { scope: 'write' }));
    let schema: number;
    let otherWorkspaceSchema: number;
    let existing: string;

    const rule = (overrides: Record<string, unknown> = {}) => ({
      schema_id: schema,
      table: 'orders',
      column: 'tenant',
      op: 'eq',
      value: 'acme',
      ...overrides,
    });

    beforeAll(async () => {
      schema = await seedSchema(fixture.t);
      // A schema number the default workspace does not have, which another workspace does.
      otherWorkspaceSchema = await seedSchema(fixture.t, 'other');
      existing = uniqueId('existing');
      expectSuccess(await api().getOrCreate({ user_group_id: existing, access_rules: [rule()] }));
    });

    /** Sends the request, expects the error, and checks that the database did not change. */
    const refusedWithoutChange = async (
      send: () => Promise<ApiResponse>,
      status: number,
      code: string,
      field: string,
    ) => {
      const before = await snapshotDatabase(fixture.t);
      expectError(await send(), status, code, field);
      expect(await snapshotDatabase(fixture.t)).toEqual(before);
    };

    /** The same malformed rules refused on create and on PUT, with the same field named. */
    const refusedEverywhere = async (rules: unknown, code: string, field: string) => {
      await refusedWithoutChange(
        () => api().getOrCreate({ user_group_id: uniqueId('refused'), access_rules: rules }),
        400,
        code,
        field,
      );
      await refusedWithoutChange(
        () => api().update({ user_group_id: existing, name: 'never', access_rules: rules }),
        400,
        code,
        field,
      );
    };

    it('refuses identifiers that are not identifiers, naming the rule and its field', async () => {
      for (const table of [
        '',
        '1orders',
        'orders;',
        'a.b.c',
        'or ders',
        '"orders"',
        'ordérs',
        'x'.repeat(64),
        'a.',
        '.a',
      ])
        await refusedEverywhere([rule(), rule({ table })], 'invalid_field', 'access_rules[1].table');
      for (const column of ['', 'a.b', "tenant'--", 'tenant)', 'ｔenant', 'x'.repeat(64), 7])
        await refusedEverywhere([rule({ column })], 'invalid_field', 'access_rules[0].column');
      // The longest identifiers and a qualified table are fine.
      const longest = 'x'.repeat(63);
      expectSuccess(
        await api().update({
          user_group_id: existing,
          access_rules: [rule({ table: `${longest}.${longest}`, column: longest })],
        }),
      );
    });

    it('refuses unknown operators, values of the wrong shape for the operator and null values', async () => {
      for (const op of ['EQ', 'like', 'between', '', 1])
        await refusedEverywhere([rule({ op })], 'invalid_field', 'access_rules[0].op');
      await refusedEverywhere([rule({ value: null })], 'invalid_field', 'access_rules[0].value');
      await refusedEverywhere([rule({ value: ['a'] })], 'invalid_field', 'access_rules[0].value');
      await refusedEverywhere([rule({ value: { nested: 1 } })], 'invalid_field', 'access_rules[0].value');
      await refusedEverywhere([rule({ value: { property: 'a', other: 1 } })], 'invalid_field', 'access_rules[0].value');
      await refusedEverywhere([rule({ value: { property: '' } })], 'invalid_field', 'access_rules[0].value');
      await refusedEverywhere([rule({ op: 'in', value: 'a' })], 'invalid_field', 'access_rules[0].value');
      await refusedEverywhere([rule({ op: 'not_in', value: ['a', null] })], 'invalid_field', 'access_rules[0].value');
      await refusedEverywhere([rule({ op: 'in', value: [['a']] })], 'invalid_field', 'access_rules[0].value');
      await refusedEverywhere(
        [rule({ op: 'in', value: Array.from({ length: 1001 }, (_, i) => i) })],
        'invalid_field',
        'access_rules[0].value',
      );
      await refusedEverywhere([rule({ op: 'is_null', value: 'a' })], 'invalid_field', 'access_rules[0].value');
      await refusedEverywhere([rule({ op: 'not_null', value: null })], 'invalid_field', 'access_rules[0].value');
      await refusedEverywhere([rule({ op: 'lt', value: undefined })], 'missing_field', 'access_rules[0].value');
      // 1000 values is the limit, and an empty list is a list.
      expectSuccess(
        await api().update({
          user_group_id: existing,
          access_rules: [
            rule({ op: 'in', value: Array.from({ length: 1000 }, (_, i) => i) }),
            rule({ op: 'in', value: [] }),
          ],
        }),
      );
    });

    it('refuses a rule that is not an object, lacks a field or has an unknown one', async () => {
      await refusedEverywhere('eq', 'invalid_field', 'access_rules');
      await refusedEverywhere({ op: 'eq' }, 'invalid_field', 'access_rules');
      await refusedEverywhere([rule(), 'tenant = acme'], 'invalid_field', 'access_rules[1]');
      await refusedEverywhere([null], 'invalid_field', 'access_rules[0]');
      for (const field of ['schema_id', 'table', 'column', 'op']) {
        const { [field]: _dropped, ...partial } = rule() as Record<string, unknown>;
        await refusedEverywhere([partial], 'missing_field', `access_rules[0].${field}`);
      }
      await refusedEverywhere([rule({ sql: '1=1' })], 'unknown_field', 'access_rules[0].sql');
    });

    it('refuses a schema the workspace does not have, and ids that are no schema ids', async () => {
      for (const schemaId of [otherWorkspaceSchema, 2_000_000_000])
        await refusedEverywhere([rule(), rule({ schema_id: schemaId })], 'unknown_schema', 'access_rules[1].schema_id');
      for (const schemaId of [0, -1, 1.5, '1', null, 2_147_483_648])
        await refusedEverywhere([rule({ schema_id: schemaId })], 'invalid_field', 'access_rules[0].schema_id');
    });

    it('refuses more than 64 rules on a group', async () => {
      await refusedEverywhere(
        Array.from({ length: 65 }, () => rule()),
        'invalid_field',
        'access_rules',
      );
      expectSuccess(
        await api().update({ user_group_id: existing, access_rules: Array.from({ length: 64 }, () => rule()) }),
      );
    });

    it('refuses any write that would give a group more than 128 rules with its ancestors: rules at any level, a link, a create under a parent', async () => {
      const sixtyFour = Array.from({ length: 64 }, () => rule());
      const root = uniqueId('root');
      const child = uniqueId('child');
      const leaf = uniqueId('leaf');
      expectSuccess(await api().getOrCreate({ user_group_id: root, access_rules: sixtyFour }));
      expectSuccess(
        await api().getOrCreate({ user_group_id: child, parent_user_group_id: root, access_rules: sixtyFour.slice(1) }),
      );
      expectSuccess(
        await api().getOrCreate({ user_group_id: leaf, parent_user_group_id: child, access_rules: [rule()] }),
      );
      // The leaf has 128 now: one more anywhere above or at it is refused.
      await refusedWithoutChange(
        () => api().update({ user_group_id: leaf, access_rules: [rule(), rule()] }),
        400,
        'invalid_field',
        'access_rules',
      );
      await refusedWithoutChange(
        () => api().update({ user_group_id: child, access_rules: sixtyFour }),
        400,
        'invalid_field',
        'access_rules',
      );
      await refusedWithoutChange(
        () => api().getOrCreate({ user_group_id: uniqueId('new'), parent_user_group_id: leaf, access_rules: [rule()] }),
        400,
        'invalid_field',
        'access_rules',
      );
      const loose = uniqueId('loose');
      expectSuccess(await api().getOrCreate({ user_group_id: loose, access_rules: [rule(), rule()] }));
      await refusedWithoutChange(
        () => api().update({ user_group_id: loose, parent_user_group_id: child }),
        400,
        'invalid_field',
        'parent_user_group_id',
      );
      // Moving the leaf's parent under a root with rules pushes the leaf over: refused, naming the link.
      const otherRoot = uniqueId('other-root');
      expectSuccess(await api().getOrCreate({ user_group_id: otherRoot, access_rules: [rule()] }));
      await refusedWithoutChange(
        () => api().update({ user_group_id: root, parent_user_group_id: otherRoot }),
        400,
        'invalid_field',
        'parent_user_group_id',
      );
      // A rule-free group may still be linked below, and a change that shrinks is fine.
      expectSuccess(await api().getOrCreate({ user_group_id: uniqueId('empty'), parent_user_group_id: leaf }));
      expectSuccess(await api().update({ user_group_id: child, access_rules: [] }));
    });

    it('refuses to mint a token whose rules refer to a property the group lacks or holds in the wrong shape', async () => {
      const mint = (body: Record<string, unknown>) =>
        fixture.client({ method: 'POST', path: '/api/user/embed_token', token: apiToken(fixture.t), body });
      const parent = uniqueId('parent');
      expectSuccess(
        await api().getOrCreate({
          user_group_id: parent,
          properties: { tenant: 'acme', list: ['a'], nested: { a: 1 } },
        }),
      );
      const id = uniqueId('refers');
      expectSuccess(await api().getOrCreate({ user_group_id: id, parent_user_group_id: parent }));
      const cases: [Record<string, unknown>, Record<string, unknown>?][] = [
        [rule({ value: { property: 'missing' } })],
        // A per-view value never satisfies a reference.
        [rule({ value: { property: 'missing' } }), { missing: 'acme' }],
        [rule({ value: { property: 'list' } })],
        [rule({ op: 'in', value: { property: 'tenant' } })],
        [rule({ value: { property: 'nested' } })],
      ];
      for (const [bad, perView] of cases) {
        expectSuccess(await api().update({ user_group_id: id, access_rules: [rule(), bad] }));
        await refusedWithoutChange(
          () => mint({ user_group_id: id, ...(perView ? { properties: perView } : {}) }),
          400,
          'unresolved_property',
          'access_rules[1]',
        );
      }
      // A parent's rule counts first: the index is the rule's place among the effective rules.
      expectSuccess(await api().update({ user_group_id: parent, access_rules: [rule(), rule()] }));
      expectError(await mint({ user_group_id: id }), 400, 'unresolved_property', 'access_rules[3]');
    });

    it('refuses to mint a token the rules make larger than 8 KiB, naming access_rules', async () => {
      const id = uniqueId('large');
      const long = 'v'.repeat(100);
      expectSuccess(
        await api().getOrCreate({
          user_group_id: id,
          access_rules: Array.from({ length: 64 }, () => rule({ value: long })),
        }),
      );
      expectError(
        await fixture.client({
          method: 'POST',
          path: '/api/user/embed_token',
          token: apiToken(fixture.t),
          body: { user_group_id: id },
        }),
        400,
        'invalid_field',
        'access_rules',
      );
    });
  });
}
