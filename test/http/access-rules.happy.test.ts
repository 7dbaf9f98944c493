// Access rules (docs/api.md#access-rules) over HTTP: a group's access rules as written and read back, inherited down four levels,
// audited, exported and imported, and carried (resolved) by the embed tokens minted for it.
import { decodeJwt } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectError, expectSuccess, seedSchema, TRANSPORTS, useClient } from './helpers.js';
import { adminCaller, apiToken } from '../support/callers.js';
import { userGroupApi, VERIFY_PATH } from '../support/user-group-api.js';
import { uniqueId } from '../support/unique-id.js';
import { independentlyVerified, type Jwk } from '../support/jwks-verifier.js';

const EMBED_PATH = '/api/user/embed_token';

for (const transport of TRANSPORTS) {
  describe(`access rules over ${transport.name}`, () => {
    const fixture = useClient(transport);
    const api = () => userGroupApi(fixture.client, apiToken(fixture.t, { scope: 'write' }));
    const mint = async (body: Record<string, unknown>) =>
      expectSuccess(await fixture.client({ method: 'POST', path: EMBED_PATH, token: apiToken(fixture.t), body }))
        .embed_token as string;
    const claimedRules = (token: string) => (decodeJwt(token).ugs as { access_rules: unknown }).access_rules;
    let schema: number;

    beforeAll(async () => {
      schema = await seedSchema(fixture.t);
    });

    const rule = (column: string, op: string, value?: unknown) => ({
      schema_id: schema,
      table: 'public.orders',
      column,
      op,
      ...(value === undefined ? {} : { value }),
    });

    it('takes every operator on create, shows the rules as given, and replaces or clears them on PUT', async () => {
      const rules = [
        rule('tenant', 'eq', 'acme'),
        rule('region', 'neq', 'emea'),
        rule('status', 'in', ['open', 'paid']),
        rule('status', 'not_in', []),
        rule('amount', 'lt', 1000.5),
        rule('amount', 'lte', 1000),
        rule('amount', 'gt', -1),
        rule('amount', 'gte', 0),
        rule('deleted_at', 'is_null'),
        rule('owner', 'not_null'),
        rule('flag', 'eq', true),
        { schema_id: schema, table: 'orders', column: '_Col_9', op: 'eq', value: { property: 'tenant' } },
      ];
      const id = uniqueId('rules');
      const created = expectSuccess(await api().getOrCreate({ user_group_id: id, access_rules: rules })).user_group;
      expect(created.access_rules).toEqual(rules);
      expect(created.computed_access_rules).toEqual(rules.map((r) => ({ ...r, team_id: created.team_id })));
      // Get-or-create of an existing group changes nothing, whatever rules it sends.
      const again = expectSuccess(await api().getOrCreate({ user_group_id: id, access_rules: [] })).user_group;
      expect(again.access_rules).toEqual(rules);

      const replaced = expectSuccess(await api().update({ user_group_id: id, access_rules: [rule('x', 'eq', 1)] }));
      expect(replaced.user_group.access_rules).toEqual([rule('x', 'eq', 1)]);
      const clearedByNull = expectSuccess(await api().update({ user_group_id: id, access_rules: null }));
      expect(clearedByNull.user_group).toMatchObject({ access_rules: [], computed_access_rules: [] });
      expectSuccess(await api().update({ user_group_id: id, access_rules: [rule('x', 'eq', 1)] }));
      const clearedByEmpty = expectSuccess(await api().update({ user_group_id: id, access_rules: [] }));
      expect(clearedByEmpty.user_group.access_rules).toEqual([]);
      // A group without rules shows them empty.
      const plain = expectSuccess(await api().getOrCreate({ user_group_id: uniqueId('plain') })).user_group;
      expect(plain).toMatchObject({ access_rules: [], computed_access_rules: [] });
    });

    it('inherits rules down four levels, each with its owner, and an ancestor change shows at once, in reads and the next token', async () => {
      const ids = [uniqueId('l1'), uniqueId('l2'), uniqueId('l3'), uniqueId('l4')];
      const teamIds: number[] = [];
      for (const [level, id] of ids.entries()) {
        const group = expectSuccess(
          await api().getOrCreate({
            user_group_id: id,
            ...(level > 0 ? { parent_user_group_id: ids[level - 1] } : {}),
            properties: level === 0 ? { tenant: 'acme' } : { [`p${level}`]: level },
            access_rules: [rule(`c${level}`, 'eq', level === 0 ? { property: 'tenant' } : level)],
          }),
        ).user_group;
        teamIds.push(group.team_id);
      }
      const leaf = () => api().getOrCreate({ user_group_id: ids[3] });
      const expected = (root: unknown) => [
        { ...rule('c0', 'eq', root), team_id: teamIds[0] },
        { ...rule('c1', 'eq', 1), team_id: teamIds[1] },
        { ...rule('c2', 'eq', 2), team_id: teamIds[2] },
        { ...rule('c3', 'eq', 3), team_id: teamIds[3] },
      ];
      expect(expectSuccess(await leaf()).user_group.computed_access_rules).toEqual(expected({ property: 'tenant' }));
      expect(claimedRules(await mint({ user_group_id: ids[3] }))).toEqual(
        expected('acme').map(({ team_id: _owner, ...r }) => r),
      );

      // The root's rules change: the leaf's next read and next token show it.
      expectSuccess(await api().update({ user_group_id: ids[0], access_rules: [rule('c0', 'eq', 'changed')] }));
      expect(expectSuccess(await leaf()).user_group.computed_access_rules).toEqual(expected('changed'));
      expect(claimedRules(await mint({ user_group_id: ids[3] }))).toEqual(
        expected('changed').map(({ team_id: _owner, ...r }) => r),
      );
      // The middle one moves out: its rules and its ancestors' leave its subtree at once.
      expectSuccess(await api().update({ user_group_id: ids[2], parent_user_group_id: null }));
      expect(expectSuccess(await leaf()).user_group.computed_access_rules).toEqual(expected('changed').slice(2));
    });

    it('follows each tree at once when trees hold the same rules: an ancestor change of rules or of a referenced property reaches the next token', async () => {
      // Two trees whose levels hold the very same rules (the same stored text): a change in one shows
      // in its own next token at once and never in the other's.
      const trees = [0, 1].map(() => ({ root: uniqueId('root'), leaf: uniqueId('leaf') }));
      const rootRules = [rule('region', 'eq', { property: 'region' }), rule('kind', 'in', ['a', 'b'])];
      const leafRules = [rule('tier', 'eq', 1), rule('owner', 'eq', { property: 'region' }), rule('tier', 'lt', 9)];
      for (const [index, { root, leaf }] of trees.entries()) {
        expectSuccess(
          await api().getOrCreate({
            user_group_id: root,
            properties: { region: index === 0 ? 'eu' : 'us' },
            access_rules: rootRules,
          }),
        );
        expectSuccess(
          await api().getOrCreate({ user_group_id: leaf, parent_user_group_id: root, access_rules: leafRules }),
        );
      }
      const tokenRules = (region: string, kinds: unknown = ['a', 'b']) => [
        rule('region', 'eq', region),
        rule('kind', 'in', kinds),
        rule('tier', 'eq', 1),
        rule('owner', 'eq', region),
        rule('tier', 'lt', 9),
      ];
      const leafToken = async (tree: number) => claimedRules(await mint({ user_group_id: trees[tree]!.leaf }));
      expect(await leafToken(0)).toEqual(tokenRules('eu'));
      expect(await leafToken(1)).toEqual(tokenRules('us'));

      // The first root's literal rule changes: its leaf's next token shows it, the other tree's does not.
      expectSuccess(
        await api().update({
          user_group_id: trees[0]!.root,
          access_rules: [rule('region', 'eq', { property: 'region' }), rule('kind', 'in', ['c'])],
        }),
      );
      expect(await leafToken(0)).toEqual(tokenRules('eu', ['c']));
      expect(await leafToken(1)).toEqual(tokenRules('us'));

      // A referenced property of the root changes: both references resolve to the new value at once.
      expectSuccess(await api().update({ user_group_id: trees[0]!.root, properties: { region: 'ap' } }));
      expect(await leafToken(0)).toEqual(tokenRules('ap', ['c']));

      // Back to the rules the other tree holds: the same text as the other root's, its own values.
      expectSuccess(await api().update({ user_group_id: trees[0]!.root, access_rules: rootRules }));
      expect(await leafToken(0)).toEqual(tokenRules('ap'));
      expect(await leafToken(1)).toEqual(tokenRules('us'));

      // The same key referred to by a list operator after a scalar one is refused, naming that rule.
      expectSuccess(
        await api().update({
          user_group_id: trees[0]!.leaf,
          access_rules: [...leafRules, rule('owners', 'in', { property: 'region' })],
        }),
      );
      expectError(
        await fixture.client({
          method: 'POST',
          path: EMBED_PATH,
          token: apiToken(fixture.t),
          body: { user_group_id: trees[0]!.leaf },
        }),
        400,
        'unresolved_property',
        'access_rules[5]',
      );
    });

    it('mints many tokens at once, each carrying its own rules: every length and value, verified by a second JWT library', async () => {
      // Groups holding the same rules text with other values, and rules of each length modulo 3 (the
      // rules' base64url is spliced into the payload), minted all at once: one signing buffer
      // serves every mint.
      const groups = Array.from({ length: 24 }, (_, index) => ({
        id: uniqueId('minted'),
        region: `r${'é'.repeat(index % 4)}${index}`,
        rules: [rule('region', 'eq', { property: 'region' }), rule(`c${'x'.repeat(index % 3)}`, 'gt', index)],
      }));
      for (const { id, region, rules } of groups)
        expectSuccess(await api().getOrCreate({ user_group_id: id, properties: { region }, access_rules: rules }));
      const tokens = await Promise.all(
        [...groups, ...groups].map(({ id }, index) =>
          mint({ user_group_id: id, ...(index % 2 ? { embed_id: 'e' } : {}) }),
        ),
      );
      // The issuer's published keys, once the first mint has made one.
      const jwks = await fixture.client({ method: 'GET', path: '/w/default/.well-known/jwks.json' });
      const keys = (jwks.body as { keys: Jwk[] }).keys;
      expect(keys.length).toBeGreaterThan(0);
      for (const [index, token] of tokens.entries()) {
        const { region, rules, id } = groups[index % groups.length]!;
        const claims = independentlyVerified(token, keys);
        expect(claims.sub).toBe(id);
        expect(claims.ugs.access_rules).toEqual([rule('region', 'eq', region), rules[1]]);
        expect(claimedRules(token)).toEqual(claims.ugs.access_rules);
      }
    });

    it('resolves references against the computed properties only: a per-view value never changes a rule', async () => {
      const parent = uniqueId('parent');
      expectSuccess(await api().getOrCreate({ user_group_id: parent, properties: { tenant: 'acme', ids: [1, 2] } }));
      const id = uniqueId('child');
      expectSuccess(
        await api().getOrCreate({
          user_group_id: id,
          parent_user_group_id: parent,
          access_rules: [rule('tenant', 'eq', { property: 'tenant' }), rule('id', 'in', { property: 'ids' })],
        }),
      );
      const token = await mint({ user_group_id: id, properties: { extra: 'per view' } });
      expect(claimedRules(token)).toEqual([rule('tenant', 'eq', 'acme'), rule('id', 'in', [1, 2])]);
      expect(decodeJwt(token).ugs).toMatchObject({ properties: { tenant: 'acme', ids: [1, 2], extra: 'per view' } });

      // The online check answers the rules the token carries, even after the group's change.
      expectSuccess(await api().update({ user_group_id: id, access_rules: [] }));
      const verified = expectSuccess(
        await fixture.client({ method: 'POST', path: VERIFY_PATH, token: apiToken(fixture.t), body: { token } }),
      );
      expect(verified.embed.access_rules).toEqual([rule('tenant', 'eq', 'acme'), rule('id', 'in', [1, 2])]);
      expect(verified.user_group.access_rules).toEqual([]);
    });

    it('audits a change of rules with before and after', async () => {
      const id = uniqueId('audited');
      const created = expectSuccess(
        await api().getOrCreate({ user_group_id: id, access_rules: [rule('a', 'eq', 1)] }),
      ).user_group;
      expectSuccess(await api().update({ user_group_id: id, access_rules: [rule('a', 'eq', 2)] }));
      const events = expectSuccess(
        await fixture.client({
          method: 'GET',
          path: `/api/admin/audit_events?team_id=${created.team_id}`,
          token: apiToken(fixture.t, { scope: 'admin' }),
        }),
      ).audit_events as { action: string; changes: Record<string, unknown> }[];
      const changesOf = (action: string) => events.find((event) => event.action === action)?.changes;
      expect(changesOf('user_group.created')).toMatchObject({
        access_rules: { before: null, after: [rule('a', 'eq', 1)] },
      });
      expect(changesOf('user_group.updated')).toEqual({
        access_rules: { before: [rule('a', 'eq', 1)], after: [rule('a', 'eq', 2)] },
      });
    });

    it('exports the rules and imports them back', async () => {
      const caller = await adminCaller(fixture.t);
      const transfer = fixture.t.runtime.services.userGroupTransfer;
      const id = uniqueId('exported');
      const rules = [rule('tenant', 'in', ['a', 'b']), rule('gone', 'is_null')];
      expectSuccess(await api().getOrCreate({ user_group_id: id, access_rules: rules }));
      const lines = [];
      for await (const line of transfer.exportUserGroups(caller, { includeTokens: false })) lines.push(line);
      const exported = lines.find((line) => line.provided_id === id)!;
      expect(exported.access_rules).toEqual(rules);

      const copy = uniqueId('imported');
      const summary = await transfer.importUserGroups(caller, [
        { line: 1, group: { ...exported, team_id: undefined, provided_id: copy } },
        { line: 2, group: { provided_id: id, access_rules: null } },
      ]);
      expect(summary).toMatchObject({ created: 1, updated: 1, rejected: [] });
      expect(expectSuccess(await api().getOrCreate({ user_group_id: copy })).user_group.access_rules).toEqual(rules);
      expect(expectSuccess(await api().getOrCreate({ user_group_id: id })).user_group.access_rules).toEqual([]);
    });
  });
}
