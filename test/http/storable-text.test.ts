// Storable text (src/domain/storable-text.rules.ts) is one rule for every free text a group stores in JSON: its
// properties' keys and values, its access rules' values and property references. A NUL, which
// PostgreSQL refuses, is refused alike wherever it comes: 400 invalid_field naming the field, nothing changed.
import { beforeAll, describe, expect, it } from 'vitest';
import { checkedAccessRules } from '../../src/domain/access-rules/access-rules.rules.js';
import { assertPropertiesWithinLimits } from '../../src/domain/user-groups/properties.rules.js';
import { expectError, expectSuccess, expectUnchanged, seedSchema } from './helpers.js';
import { syncCall } from './sync-helpers.js';
import { apiToken } from '../support/callers.js';
import { injectClient } from '../support/http-client.js';
import { uniqueId } from '../support/unique-id.js';
import { userGroupApi } from '../support/user-group-api.js';
import { useTestApp } from '../support/test-app.js';

describe('storable text over HTTP: a NUL is refused in every stored text', () => {
  const fixture = useTestApp();
  const api = () => userGroupApi(injectClient(fixture.t.app), apiToken(fixture.t, { scope: 'write' }));
  let schema: number;
  let group: string;
  const rule = (value: unknown) => ({ schema_id: schema, table: 'orders', column: 'tenant', op: 'eq', value });

  beforeAll(async () => {
    schema = await seedSchema(fixture.t);
    group = uniqueId('stored');
    expectSuccess(await api().getOrCreate({ user_group_id: group, properties: { plan: 'pro' } }));
  });

  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['a property value', { properties: { plan: 'p\u0000ro' } }, 'properties'],
    ['a property key', { properties: { ['pl\u0000an']: 'pro' } }, 'properties'],
    ['an access rule value', { access_rules: [{ schema_id: 0, value: 'ac\u0000me' }] }, 'access_rules[0].value'],
    ['an access rule list item', { access_rules: [{ op: 'in', value: ['a', 'b\u0000'] }] }, 'access_rules[0].value'],
    ['a property reference', { access_rules: [{ value: { property: 'ten\u0000ant' } }] }, 'access_rules[0].value'],
  ];

  /** The case's fields, with each access rule completed around what it sets. */
  const fields = (fields: Record<string, unknown>) =>
    Array.isArray(fields.access_rules)
      ? {
          access_rules: (fields.access_rules as Array<Record<string, unknown>>).map(({ schema_id: _, ...over }) => ({
            ...rule('acme'),
            ...over,
          })),
        }
      : fields;

  for (const [label, given, field] of cases) {
    it(`refuses ${label} with a NUL on create and update, and through a sync (400 invalid_field "${field}")`, async () => {
      const create = await expectUnchanged(fixture.t, () =>
        api().getOrCreate({ user_group_id: uniqueId('refused'), ...fields(given) }),
      );
      expectError(create, 400, 'invalid_field', field);
      const update = await expectUnchanged(fixture.t, () => api().update({ user_group_id: group, ...fields(given) }));
      expectError(update, 400, 'invalid_field', field);
      const synced = await expectUnchanged(fixture.t, () =>
        syncCall(fixture.t, [{ user_group_id: uniqueId('synced'), ...fields(given) }]),
      );
      expectError(synced, 400, 'invalid_field', field);
    });
  }
});

describe('storable text in the rules: properties and access rules refuse the same texts', () => {
  const texts: Array<[string, string, boolean]> = [
    ['plain text', 'acme', true],
    ['a surrogate pair', 'a🚀b', true],
    ['a NUL', 'a\u0000b', false],
    ['a lone high surrogate', 'a\ud800b', false],
    ['a lone low surrogate', 'a\udc00b', false],
  ];
  for (const [label, text, storable] of texts) {
    it(`${storable ? 'takes' : 'refuses'} ${label} alike`, () => {
      const property = () => assertPropertiesWithinLimits({ key: text });
      const key = () => assertPropertiesWithinLimits({ [text]: 1 });
      const value = () =>
        checkedAccessRules([{ schema_id: 1, table: 'orders', column: 'tenant', op: 'eq', value: text }]);
      const reference = () =>
        checkedAccessRules([{ schema_id: 1, table: 'orders', column: 'tenant', op: 'eq', value: { property: text } }]);
      for (const check of [property, key, value, reference])
        if (storable) expect(check).not.toThrow();
        else expect(check).toThrow(expect.objectContaining({ code: 'invalid_field' }));
    });
  }
});
