import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../src/domain/common.records.js';
import type { UserGroupPatch, UserGroupRecord } from '../../../src/domain/user-groups/user-group.records.js';
import type { Tenant } from '../../../src/domain/tenancy.js';
import {
  auditContext,
  auditWrittenBy,
  createGroup,
  expectAppError,
  newGroup,
  randomHex,
  RICH_PROPERTIES,
  T1,
  T2,
} from '../store-fixtures.js';
import type { ContractContext } from './context.js';

export function describeUserGroupContract(t: ContractContext): void {
  const create = (tenant: Tenant, providedId: string, overrides: Parameters<typeof newGroup>[2] = {}) =>
    createGroup(t.store, tenant, providedId, overrides);

  const update = (group: UserGroupRecord, patch: UserGroupPatch, expectedVersion = group.version) =>
    t.store.updateUserGroup(
      {
        tenant: { workspaceId: group.workspaceId, environment: group.environment },
        teamId: group.teamId,
        expectedVersion,
        patch,
        updatedAt: T1,
      },
      auditContext(),
    );

  const rotate = (tenant: Tenant, currentTokenHash: string, newTokenHash = randomHex()) =>
    t.store.rotateUserGroupToken(
      { tenant, currentTokenHash, newTokenHash, newTokenCiphertext: `cipher-${newTokenHash}`, updatedAt: T2 },
      auditContext(),
    );

  /** The group as `rotate` leaves it with the token `newHash`. */
  const rotatedTo = (group: UserGroupRecord, newHash: string): UserGroupRecord => ({
    ...group,
    tokenHash: newHash,
    tokenCiphertext: `cipher-${newHash}`,
    version: group.version + 1,
    tokenGeneration: group.tokenGeneration + 1,
    updatedAt: T2,
  });

  const tenantOf = (group: UserGroupRecord): Tenant => ({
    workspaceId: group.workspaceId,
    environment: group.environment,
  });

  describe('user groups: create and find', () => {
    it('creates a full record with the mapping sorted by schema id', async () => {
      const { customer, customerA, customerB, schemaA, schemaB } = t.fx;
      const input = newGroup(customer, 'example_1', {
        name: 'Example 1',
        properties: { filterValue: 'value' },
        mapping: [
          { schemaId: schemaB.id, dataSourceId: customerB.id },
          { schemaId: schemaA.id, dataSourceId: customerA.id },
        ],
      });
      const { group, created } = await t.store.insertUserGroupIfAbsent(input, auditContext());
      expect(created).toBe(true);
      expect(group).toEqual({
        teamId: expect.any(Number),
        workspaceId: customer.workspaceId,
        environment: 'Customer',
        providedId: 'example_1',
        name: 'Example 1',
        tokenHash: input.tokenHash,
        tokenCiphertext: input.tokenCiphertext,
        properties: { filterValue: 'value' },
        mapping: [
          { schemaId: schemaA.id, dataSourceId: customerA.id },
          { schemaId: schemaB.id, dataSourceId: customerB.id },
        ],
        parentProvidedId: null,
        ancestors: [],
        isDemoGroup: false,
        tags: [],
        accessRules: [],
        version: 1,
        tokenGeneration: 0,
        createdAt: input.createdAt,
        updatedAt: input.createdAt,
      });
    });

    it('finds a group by provided id and by token hash inside its tenant only', async () => {
      const { customer, testing, otherCustomer } = t.fx;
      const group = await create(customer, 'g1', {
        mapping: [{ schemaId: t.fx.schemaA.id, dataSourceId: t.fx.customerA.id }],
      });
      expect(await t.store.findUserGroupByProvidedId(customer, 'g1')).toEqual(group);
      expect(await t.store.findUserGroupByTokenHash(customer, group.tokenHash)).toEqual(group);
      for (const stranger of [testing, otherCustomer]) {
        expect(await t.store.findUserGroupByProvidedId(stranger, 'g1')).toBeNull();
        expect(await t.store.findUserGroupByTokenHash(stranger, group.tokenHash)).toBeNull();
      }
      expect(await t.store.findUserGroupByProvidedId(customer, 'G1')).toBeNull();
      expect(await t.store.findUserGroupByTokenHash(customer, randomHex())).toBeNull();
    });

    it('keeps the same provided id apart in each environment and workspace', async () => {
      const { customer, testing, otherCustomer } = t.fx;
      const groups = [
        await create(customer, 'same'),
        await create(testing, 'same'),
        await create(otherCustomer, 'same'),
      ];
      expect(new Set(groups.map((group) => group.teamId)).size).toBe(3);
      expect(await t.store.findUserGroupByProvidedId(testing, 'same')).toEqual(groups[1]);
    });

    it('get-or-create returns the existing group untouched, with created: false', async () => {
      const first = await create(t.fx.customer, 'g1', { properties: { a: 1 } });
      const retry = newGroup(t.fx.customer, 'g1', { name: 'Other', properties: { b: 2 }, createdAt: T2 });
      const second = await t.store.insertUserGroupIfAbsent(retry, auditContext());
      expect(second).toEqual({ group: first, created: false });
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, retry.tokenHash)).toBeNull();
    });

    it('answers creates asked for together each on its own: its group, its audit event, an existing one untouched', async () => {
      const { customer, testing, schemaA, customerA, testingA } = t.fx;
      const existing = await create(customer, 'c0', { properties: { a: 1 } });
      const asks = [
        newGroup(customer, 'c1', {
          properties: { n: 1 },
          mapping: [{ schemaId: schemaA.id, dataSourceId: customerA.id }],
        }),
        newGroup(customer, 'c2', { tags: ['x', 'y'], createdAt: T1 }),
        newGroup(testing, 'c1', { mapping: [{ schemaId: schemaA.id, dataSourceId: testingA.id }], isDemoGroup: true }),
        newGroup(customer, 'c0', { name: 'Other', properties: { b: 2 }, createdAt: T2 }),
        newGroup(testing, 'c3', { createdAt: T2 }),
        newGroup(testing, 'c3', { name: 'Twice' }),
      ];
      const made = [0, 1, 2, 4];
      let results: Array<{ group: UserGroupRecord; created: boolean }> = [];
      const events = await auditWrittenBy(t.store, customer.workspaceId, async () => {
        // One turn of the event loop: PostgreSQL sends these as one statement (docs/adr/0019-postgresql-group-writes.md).
        results = await Promise.all(
          asks.map((ask, index) =>
            t.store.insertUserGroupIfAbsent(ask, auditContext({ requestId: `req-new-${index}` })),
          ),
        );
      });
      for (const index of made) {
        const ask = asks[index]!;
        expect(results[index]).toEqual({
          created: true,
          group: {
            teamId: expect.any(Number),
            workspaceId: ask.tenant.workspaceId,
            environment: ask.tenant.environment,
            providedId: ask.providedId,
            name: ask.name,
            tokenHash: ask.tokenHash,
            tokenCiphertext: ask.tokenCiphertext,
            properties: ask.properties,
            mapping: ask.mapping,
            parentProvidedId: null,
            ancestors: [],
            isDemoGroup: ask.isDemoGroup,
            tags: ask.tags,
            accessRules: [],
            version: 1,
            tokenGeneration: 0,
            createdAt: ask.createdAt,
            updatedAt: ask.createdAt,
          },
        });
        expect(await t.store.findUserGroupByProvidedId(ask.tenant, ask.providedId)).toEqual(results[index]!.group);
      }
      expect(results[3]).toEqual({ group: existing, created: false });
      expect(results[5]).toEqual({ group: results[4]!.group, created: false });
      expect(await t.store.findUserGroupByTokenHash(testing, asks[5]!.tokenHash)).toBeNull();
      const teamIds = made.map((index) => results[index]!.group.teamId);
      expect(new Set([...teamIds, existing.teamId]).size).toBe(made.length + 1);
      expect(Math.min(...teamIds)).toBeGreaterThan(existing.teamId);
      expect(events.map((event) => [event.action, event.teamId, event.environment, event.requestId]).sort()).toEqual(
        made
          .map((index) => [
            'user_group.created',
            results[index]!.group.teamId,
            asks[index]!.tenant.environment,
            `req-new-${index}`,
          ])
          .sort(),
      );
    });

    it('fails only the create the store refuses among creates asked for together', async () => {
      const { customer, testing, schemaA } = t.fx;
      // A data source that is not there (deleted since the request checked it): the mapping is refused.
      const refused = newGroup(customer, 'bad', { mapping: [{ schemaId: schemaA.id, dataSourceId: 987_654 }] });
      const asks = [newGroup(customer, 'ok1'), refused, newGroup(testing, 'ok2')];
      const results = await Promise.allSettled(
        asks.map((ask, index) => t.store.insertUserGroupIfAbsent(ask, auditContext({ requestId: `req-f-${index}` }))),
      );
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      for (const index of [0, 2]) {
        const ask = asks[index]!;
        const stored = await t.store.findUserGroupByProvidedId(ask.tenant, ask.providedId);
        expect(results[index]).toEqual({ status: 'fulfilled', value: { group: stored, created: true } });
      }
      expect(await t.store.findUserGroupByProvidedId(customer, 'bad')).toBeNull();
    });

    it('creates exactly one group from concurrent get-or-create calls', async () => {
      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          t.store.insertUserGroupIfAbsent(newGroup(t.fx.customer, 'race'), auditContext()),
        ),
      );
      expect(results.filter((result) => result.created)).toHaveLength(1);
      const [first] = results;
      for (const result of results) expect(result.group).toEqual(first?.group);
    });

    it('never reuses a team_id, even after the newest group is deleted', async () => {
      const older = await create(t.fx.customer, 'older');
      const newest = await create(t.fx.customer, 'g1');
      expect(await t.store.deleteUserGroup(t.fx.customer, newest.teamId, newest.version, auditContext())).toEqual({
        status: 'deleted',
      });
      const recreated = await create(t.fx.customer, 'g1');
      expect(recreated.teamId).toBeGreaterThan(newest.teamId);
      expect(recreated.teamId).not.toBe(older.teamId);
      expect(recreated.tokenHash).not.toBe(newest.tokenHash);
    });

    it('round-trips properties deep-equal, and null as null', async () => {
      const rich = await create(t.fx.customer, 'rich', { properties: RICH_PROPERTIES as JsonObject });
      expect((await t.store.findUserGroupByProvidedId(t.fx.customer, 'rich'))?.properties).toEqual(RICH_PROPERTIES);
      expect(rich.properties).toEqual(RICH_PROPERTIES);
      const plain = await create(t.fx.customer, 'plain');
      expect(plain.properties).toBeNull();
      expect(plain.mapping).toEqual([]);
    });
  });

  describe('user groups: a mapping agrees with the schemas of its data sources', () => {
    // The domain resolves a mapping before the write; a data source's schema changed in between
    // must not slip through: the store refuses it inside the write itself, on every write path.
    const contradicting = () => [{ schemaId: t.fx.schemaB.id, dataSourceId: t.fx.customerA.id }];

    it('refuses to create, update or import a group with a data source under another schema, writing nothing', async () => {
      const { customer } = t.fx;
      const audit = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        await expectAppError(
          t.store.insertUserGroupIfAbsent(
            newGroup(customer, 'contradicting', { mapping: contradicting() }),
            auditContext(),
          ),
          'data_source_schema_mismatch',
          'mapping',
        );
        const group = await create(customer, 'agreeing');
        await expectAppError(update(group, { mapping: contradicting() }), 'data_source_schema_mismatch', 'mapping');
        await expectAppError(
          t.store.applyUserGroupWrites(
            customer,
            [{ kind: 'create', group: newGroup(customer, 'imported', { mapping: contradicting() }), changes: {} }],
            auditContext(),
            { policy: 'per_batch' },
          ),
          'data_source_schema_mismatch',
          'mapping',
        );
        expect(await t.store.findUserGroupByProvidedId(customer, 'agreeing')).toEqual(group);
      });
      expect(audit.map((event) => event.action)).toEqual(['user_group.created']);
      expect(await t.store.findUserGroupByProvidedId(customer, 'contradicting')).toBeNull();
      expect(await t.store.findUserGroupByProvidedId(customer, 'imported')).toBeNull();
    });
  });

  describe('user groups: update', () => {
    it('changes only the name when only the name is patched, bumping version and updatedAt', async () => {
      const group = await create(t.fx.customer, 'g1', { properties: { keep: true } });
      const updated = await update(group, { name: 'Renamed' });
      expect(updated).toEqual({ ...group, name: 'Renamed', version: group.version + 1, updatedAt: T1 });
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'g1')).toEqual(updated);
    });

    it('replaces properties whole, and clears them with null', async () => {
      const group = await create(t.fx.customer, 'g1', { properties: { a: 1, b: 2 } });
      const replaced = await update(group, { properties: RICH_PROPERTIES as JsonObject });
      expect(replaced?.properties).toEqual(RICH_PROPERTIES);
      const cleared = await update(replaced!, { properties: null });
      expect(cleared).toEqual({ ...group, properties: null, version: group.version + 2, updatedAt: T1 });
    });

    it('replaces the mapping whole, and clears it with an empty one', async () => {
      const { schemaA, schemaB, customerA, customerB } = t.fx;
      const group = await create(t.fx.customer, 'g1', {
        mapping: [{ schemaId: schemaA.id, dataSourceId: customerA.id }],
      });
      const replaced = await update(group, { mapping: [{ schemaId: schemaB.id, dataSourceId: customerB.id }] });
      expect(replaced?.mapping).toEqual([{ schemaId: schemaB.id, dataSourceId: customerB.id }]);
      const cleared = await update(replaced!, { mapping: [] });
      expect(cleared?.mapping).toEqual([]);
      expect((await t.store.findUserGroupByProvidedId(t.fx.customer, 'g1'))?.mapping).toEqual([]);
    });

    it('leaves the mapping alone when the patch has none', async () => {
      const mapping = [{ schemaId: t.fx.schemaA.id, dataSourceId: t.fx.customerA.id }];
      const group = await create(t.fx.customer, 'g1', { mapping });
      expect((await update(group, { properties: { x: 1 } }))?.mapping).toEqual(mapping);
    });

    it('renames the provided id, keeping team_id and token', async () => {
      const group = await create(t.fx.customer, 'old-id');
      const renamed = await update(group, { providedId: 'new-id' });
      expect(renamed).toEqual({ ...group, providedId: 'new-id', version: 2, updatedAt: T1 });
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'old-id')).toBeNull();
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'new-id')).toEqual(renamed);
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, group.tokenHash)).toEqual(renamed);
    });

    it('refuses a rename onto another group of the tenant with user_group_id_taken, changing nothing', async () => {
      const group = await create(t.fx.customer, 'g1');
      await create(t.fx.customer, 'g2');
      await expectAppError(
        update(group, { providedId: 'g2', name: 'lost' }),
        'user_group_id_taken',
        'new_user_group_id',
      );
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'g1')).toEqual(group);
    });

    it('keeps concurrent writes apart: a refused one changes nothing and the others all commit with their audit events', async () => {
      const g1 = await create(t.fx.customer, 'c1');
      await create(t.fx.customer, 'c2');
      // The refused rename is of another group than the rotation: were it of the same one, on an
      // engine that runs them on two connections the rotation could commit first and leave the
      // rename a version behind (null, not refused), which is no less "changed nothing".
      const g3 = await create(t.fx.customer, 'c3');
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        // Issued together, so an engine that commits writes in groups puts them in one batch.
        const results = await Promise.allSettled([
          ...Array.from({ length: 10 }, (_, i) => create(t.fx.customer, `batch-${i}`)),
          update(g3, { providedId: 'c2', name: 'lost' }),
          rotate(t.fx.customer, g1.tokenHash),
        ]);
        expect(results.map((result) => result.status)).toEqual([
          ...Array(10).fill('fulfilled'),
          'rejected',
          'fulfilled',
        ]);
        await expectAppError(Promise.reject((results[10] as PromiseRejectedResult).reason), 'user_group_id_taken');
      });
      expect(events.map((event) => event.action).sort()).toEqual([
        ...Array(10).fill('user_group.created'),
        'user_group.token_rotated',
      ]);
      for (let i = 0; i < 10; i++)
        expect(await t.store.findUserGroupByProvidedId(t.fx.customer, `batch-${i}`)).not.toBeNull();
      const after = await t.store.findUserGroupByProvidedId(t.fx.customer, 'c1');
      expect(after).toMatchObject({ name: g1.name, version: g1.version + 1 });
      expect(after?.tokenHash).not.toBe(g1.tokenHash);
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'c3')).toEqual(g3);
    });

    it('allows a rename onto an id that exists only in another tenant', async () => {
      await create(t.fx.testing, 'g2');
      const group = await create(t.fx.customer, 'g1');
      expect((await update(group, { providedId: 'g2' }))?.providedId).toBe('g2');
    });

    it('swaps the token when the patch carries tokenHash and tokenCiphertext, and keeps it otherwise', async () => {
      const group = await create(t.fx.customer, 'g1');
      const kept = await update(group, { name: 'Same token' });
      expect(kept).toMatchObject({ tokenHash: group.tokenHash, tokenCiphertext: group.tokenCiphertext });
      const tokenHash = randomHex();
      const swapped = await update(kept!, { tokenHash, tokenCiphertext: `cipher-${tokenHash}` });
      expect(swapped).toEqual({
        ...kept,
        tokenHash,
        tokenCiphertext: `cipher-${tokenHash}`,
        version: group.version + 2,
        tokenGeneration: 1,
      });
      expect(kept!.tokenGeneration).toBe(0);
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, group.tokenHash)).toBeNull();
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, tokenHash)).toEqual(swapped);
    });

    it('returns null and changes nothing when the version moved on', async () => {
      const group = await create(t.fx.customer, 'g1');
      expect(await update(group, { name: 'stale' }, group.version + 1)).toBeNull();
      expect(
        await update(group, { mapping: [{ schemaId: t.fx.schemaA.id, dataSourceId: t.fx.customerA.id }] }, 0),
      ).toBeNull();
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'g1')).toEqual(group);
    });

    it('returns null for a group of another tenant', async () => {
      const group = await create(t.fx.customer, 'g1');
      const base = { teamId: group.teamId, expectedVersion: group.version, patch: { name: 'x' }, updatedAt: T1 };
      for (const tenant of [t.fx.testing, t.fx.otherCustomer]) {
        expect(await t.store.updateUserGroup({ ...base, tenant }, auditContext())).toBeNull();
      }
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'g1')).toEqual(group);
    });
  });

  describe('user groups: rotate and delete', () => {
    it('rotates the token: the new one works, the old one is dead at once', async () => {
      const group = await create(t.fx.customer, 'g1');
      const newHash = randomHex();
      const rotated = await rotate(t.fx.customer, group.tokenHash, newHash);
      expect(rotated).toEqual(rotatedTo(group, newHash));
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, group.tokenHash)).toBeNull();
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, newHash)).toEqual(rotated);
      expect(await rotate(t.fx.customer, group.tokenHash)).toBeNull();
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, newHash)).toEqual(rotated);
    });

    it('does not rotate a token from another tenant', async () => {
      const group = await create(t.fx.customer, 'g1');
      expect(await rotate(t.fx.testing, group.tokenHash)).toBeNull();
      expect(await rotate(t.fx.otherCustomer, group.tokenHash)).toBeNull();
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, group.tokenHash)).toEqual(group);
    });

    it('lets exactly one of concurrent rotations with the same token win', async () => {
      const group = await create(t.fx.customer, 'g1');
      const results = await Promise.all(Array.from({ length: 5 }, () => rotate(t.fx.customer, group.tokenHash)));
      expect(results.filter((result) => result !== null)).toHaveLength(1);
    });

    it('answers rotations asked for together each on its own: its group, its audit event, a gone token null', async () => {
      const groups = await Promise.all(['r1', 'r2', 'r3'].map((id) => create(t.fx.customer, id)));
      const other = await create(t.fx.testing, 'r4');
      const gone = randomHex();
      const asks = [...groups, other].map((group, index) => ({
        group,
        newHash: randomHex(),
        requestId: `req-rot-${index}`,
      }));
      let results: Array<UserGroupRecord | null> = [];
      const events = await auditWrittenBy(t.store, t.fx.customer.workspaceId, async () => {
        // One turn of the event loop: PostgreSQL sends these as one statement (docs/adr/0019-postgresql-group-writes.md).
        results = await Promise.all([
          ...asks.map(({ group, newHash, requestId }) =>
            t.store.rotateUserGroupToken(
              {
                tenant: tenantOf(group),
                currentTokenHash: group.tokenHash,
                newTokenHash: newHash,
                newTokenCiphertext: `cipher-${newHash}`,
                updatedAt: T2,
              },
              auditContext({ requestId }),
            ),
          ),
          rotate(t.fx.customer, gone),
        ]);
      });
      asks.forEach(({ group, newHash }, index) => expect(results[index]).toEqual(rotatedTo(group, newHash)));
      expect(results[asks.length]).toBeNull();
      expect(events.map((event) => [event.action, event.teamId, event.environment, event.requestId]).sort()).toEqual(
        asks
          .map(({ group, requestId }) => ['user_group.token_rotated', group.teamId, group.environment, requestId])
          .sort(),
      );
    });

    it('deletes only with the expected version and tenant', async () => {
      const group = await create(t.fx.customer, 'g1');
      expect(await t.store.deleteUserGroup(t.fx.customer, group.teamId, group.version + 1, auditContext())).toEqual({
        status: 'moved',
      });
      expect(await t.store.deleteUserGroup(t.fx.testing, group.teamId, group.version, auditContext())).toEqual({
        status: 'moved',
      });
      expect(await t.store.deleteUserGroup(t.fx.otherCustomer, group.teamId, group.version, auditContext())).toEqual({
        status: 'moved',
      });
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'g1')).toEqual(group);

      expect(await t.store.deleteUserGroup(t.fx.customer, group.teamId, group.version, auditContext())).toEqual({
        status: 'deleted',
      });
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'g1')).toBeNull();
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, group.tokenHash)).toBeNull();
      expect(await t.store.deleteUserGroup(t.fx.customer, group.teamId, group.version, auditContext())).toEqual({
        status: 'moved',
      });
    });

    it('deletes a mapped group with its mapping; the id starts afresh', async () => {
      const { schemaA, schemaB, customerA, customerB } = t.fx;
      const group = await create(t.fx.customer, 'g1', {
        mapping: [{ schemaId: schemaA.id, dataSourceId: customerA.id }],
      });
      expect(await t.store.deleteUserGroup(tenantOf(group), group.teamId, group.version, auditContext())).toEqual({
        status: 'deleted',
      });
      const mapping = [{ schemaId: schemaB.id, dataSourceId: customerB.id }];
      const recreated = await create(t.fx.customer, 'g1', { mapping });
      expect(recreated.mapping).toEqual(mapping);
      expect(recreated.version).toBe(1);
    });
  });
}
