import { describe, expect, it } from 'vitest';
import type { AuditContext, FieldChanges } from '../../../src/domain/audit/audit.records.js';
import type { UserGroupPatch, UserGroupRecord } from '../../../src/domain/user-groups/user-group.records.js';
import type { UserGroupWrite, UserGroupWritePolicy } from '../../../src/domain/user-groups/user-groups.port.js';
import {
  API_ACTOR,
  auditWrittenBy,
  createGroup,
  expectAppError,
  newGroup,
  randomHex,
  T0,
  T1,
  T2,
} from '../store-fixtures.js';
import type { ContractContext } from './context.js';
import { isAppError } from '../../../src/domain/errors.js';

export function describeUserGroupBatchContract(t: ContractContext): void {
  const batchContext: Omit<AuditContext, 'changes'> = { at: T2, actor: API_ACTOR, requestId: 'import-1' };

  const changesOf = (label: string): FieldChanges => ({ name: { before: null, after: label } });

  const createWrite = (providedId: string, overrides: Parameters<typeof newGroup>[2] = {}): UserGroupWrite => ({
    kind: 'create',
    group: newGroup(t.fx.customer, providedId, overrides),
    changes: changesOf(`create ${providedId}`),
  });

  const updateWrite = (
    group: UserGroupRecord,
    patch: UserGroupPatch,
    expectedVersion = group.version,
  ): UserGroupWrite => ({
    kind: 'update',
    update: {
      tenant: { workspaceId: group.workspaceId, environment: group.environment },
      teamId: group.teamId,
      expectedVersion,
      patch,
      updatedAt: T1,
    },
    changes: changesOf(`update ${group.providedId}`),
  });

  /** Everything a batch could have touched: the fixture workspace's groups in both environments. */
  const snapshot = async () => ({
    customer: await t.store.listUserGroups({ tenant: t.fx.customer, limit: 1000 }),
    testing: await t.store.listUserGroups({ tenant: t.fx.testing, limit: 1000 }),
  });

  /** Runs a batch that must fail with `code`, and checks that it changed nothing and audited nothing. */
  const expectRefusedBatch = async (writes: UserGroupWrite[], code: 'concurrent_change' | 'user_group_id_taken') => {
    const before = await snapshot();
    const events = await auditWrittenBy(t.store, t.fx.workspace.id, () =>
      expectAppError(t.store.applyUserGroupWrites(t.fx.customer, writes, batchContext, { policy: 'per_batch' }), code),
    );
    expect(events).toEqual([]);
    expect(await snapshot()).toEqual(before);
  };

  describe('user groups: batch writes', () => {
    it('applies creates and updates together, with one audit event per write in order', async () => {
      const { customer, schemaA, schemaB, customerA, customerB } = t.fx;
      const existing = await createGroup(t.store, customer, 'old', { properties: { keep: true } });
      const mapping = [{ schemaId: schemaA.id, dataSourceId: customerA.id }];
      const input = newGroup(customer, 'new-1', { name: 'New One', properties: { a: 1 }, mapping, createdAt: T0 });
      const newMapping = [{ schemaId: schemaB.id, dataSourceId: customerB.id }];
      const writes: UserGroupWrite[] = [
        { kind: 'create', group: input, changes: changesOf('create new-1') },
        updateWrite(existing, { providedId: 'renamed', name: 'Renamed', mapping: newMapping }),
        createWrite('new-2'),
      ];
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, () =>
        t.store.applyUserGroupWrites(t.fx.customer, writes, batchContext, { policy: 'per_batch' }),
      );

      const created = await t.store.findUserGroupByProvidedId(customer, 'new-1');
      expect(created).toEqual({
        teamId: expect.any(Number),
        workspaceId: customer.workspaceId,
        environment: 'Customer',
        providedId: 'new-1',
        name: 'New One',
        tokenHash: input.tokenHash,
        tokenCiphertext: input.tokenCiphertext,
        properties: { a: 1 },
        mapping,
        parentProvidedId: null,
        ancestors: [],
        isDemoGroup: false,
        tags: [],
        accessRules: [],
        version: 1,
        tokenGeneration: 0,
        createdAt: T0,
        updatedAt: T0,
      });
      const updated = await t.store.findUserGroupByTeamId(customer, existing.teamId);
      expect(updated).toEqual({
        ...existing,
        providedId: 'renamed',
        name: 'Renamed',
        mapping: newMapping,
        version: existing.version + 1,
        updatedAt: T1,
      });
      const second = await t.store.findUserGroupByProvidedId(customer, 'new-2');
      expect(second?.teamId).toBeGreaterThan(created?.teamId ?? Infinity);

      expect(
        events.map(({ action, teamId, providedId, environment, changes }) => ({
          action,
          teamId,
          providedId,
          environment,
          changes,
        })),
      ).toEqual([
        {
          action: 'user_group.created',
          teamId: created?.teamId,
          providedId: 'new-1',
          environment: 'Customer',
          changes: changesOf('create new-1'),
        },
        {
          action: 'user_group.updated',
          teamId: existing.teamId,
          providedId: 'renamed',
          environment: 'Customer',
          changes: changesOf('update old'),
        },
        {
          action: 'user_group.created',
          teamId: second?.teamId,
          providedId: 'new-2',
          environment: 'Customer',
          changes: changesOf('create new-2'),
        },
      ]);
      for (const event of events) expect(event).toMatchObject({ at: T2, actor: API_ACTOR, requestId: 'import-1' });
    });

    it('applies a token carried by an update write', async () => {
      const group = await createGroup(t.store, t.fx.customer, 'g1');
      const tokenHash = randomHex();
      await t.store.applyUserGroupWrites(
        t.fx.customer,
        [updateWrite(group, { tokenHash, tokenCiphertext: 'imported-cipher' })],
        batchContext,
        { policy: 'per_batch' },
      );
      const updated = await t.store.findUserGroupByTokenHash(t.fx.customer, tokenHash);
      // A new token voids the embed tokens minted under the old one: its generation moves on.
      expect(updated).toEqual({
        ...group,
        tokenHash,
        tokenCiphertext: 'imported-cipher',
        version: 2,
        tokenGeneration: group.tokenGeneration + 1,
        updatedAt: T1,
      });
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, group.tokenHash)).toBeNull();
    });

    it('writes nothing for an empty batch', async () => {
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, () =>
        t.store.applyUserGroupWrites(t.fx.customer, [], batchContext, { policy: 'per_batch' }),
      );
      expect(events).toEqual([]);
    });

    it('refuses the whole batch with concurrent_change when one create finds its provided id taken', async () => {
      const existing = await createGroup(t.store, t.fx.customer, 'taken');
      await expectRefusedBatch(
        [createWrite('fresh-1'), updateWrite(existing, { name: 'x' }), createWrite('taken'), createWrite('fresh-2')],
        'concurrent_change',
      );
      expect(await t.store.findUserGroupsByProvidedIds(t.fx.customer, ['fresh-1', 'fresh-2'])).toEqual([]);
    });

    it('refuses the whole batch when it creates one provided id twice', async () => {
      await expectRefusedBatch([createWrite('twice'), createWrite('other'), createWrite('twice')], 'concurrent_change');
    });

    it('refuses the whole batch with concurrent_change when one update is stale', async () => {
      const group = await createGroup(t.store, t.fx.customer, 'g1');
      const other = await createGroup(t.store, t.fx.customer, 'g2');
      const moved = await t.store.updateUserGroup(
        { tenant: t.fx.customer, teamId: group.teamId, expectedVersion: 1, patch: { name: 'moved' }, updatedAt: T1 },
        { at: T1, actor: API_ACTOR, requestId: null },
      );
      expect(moved?.version).toBe(2);
      await expectRefusedBatch(
        [createWrite('fresh'), updateWrite(other, { name: 'y' }), updateWrite(group, { name: 'stale' }, 1)],
        'concurrent_change',
      );
    });

    it('refuses the whole batch when one update targets a deleted group or another tenant', async () => {
      const gone = await createGroup(t.store, t.fx.customer, 'gone');
      await t.store.deleteUserGroup(t.fx.customer, gone.teamId, gone.version, batchContext);
      await expectRefusedBatch([createWrite('fresh'), updateWrite(gone, { name: 'z' })], 'concurrent_change');

      const inTesting = await createGroup(t.store, t.fx.testing, 'elsewhere');
      const misdirected = updateWrite(inTesting, { name: 'z' });
      if (misdirected.kind === 'update') misdirected.update.tenant = t.fx.customer;
      await expectRefusedBatch([createWrite('fresh'), misdirected], 'concurrent_change');
    });

    it('refuses the whole batch with user_group_id_taken when an update renames onto another group', async () => {
      const group = await createGroup(t.store, t.fx.customer, 'g1');
      await createGroup(t.store, t.fx.customer, 'g2');
      await expectRefusedBatch([createWrite('fresh'), updateWrite(group, { providedId: 'g2' })], 'user_group_id_taken');
    });
  });

  describe('kept team_ids (an import asks for them)', () => {
    const keep = async (providedId: string, teamId: number) => {
      await t.store.applyUserGroupWrites(t.fx.customer, [createWrite(providedId, { teamId })], batchContext, {
        policy: 'per_batch',
      });
      return (await t.store.findUserGroupByProvidedId(t.fx.customer, providedId))!.teamId;
    };

    it('keeps every never-issued team_id whatever the order of the writes, and issues later ones above them', async () => {
      // The mark now: the highest team_id the deployment has issued or kept.
      const mark = (await createGroup(t.store, t.fx.customer, `mark-${randomHex()}`)).teamId;
      const prefix = randomHex();
      // Descending, each its own batch: every number below the first lies in the gap it left.
      const asked = [mark + 40, mark + 30, mark + 35, mark + 10, mark + 1, mark + 39];
      const kept = [];
      for (const [index, teamId] of asked.entries()) kept.push(await keep(`${prefix}-${index}`, teamId));
      expect(kept).toEqual(asked);
      // In one batch too, mixed with a plain create (which is issued above every kept one).
      await t.store.applyUserGroupWrites(
        t.fx.customer,
        [
          createWrite(`${prefix}-a`, { teamId: mark + 20 }),
          createWrite(`${prefix}-b`),
          createWrite(`${prefix}-c`, { teamId: mark + 15 }),
        ],
        batchContext,
        { policy: 'per_batch' },
      );
      const read = async (providedId: string) =>
        (await t.store.findUserGroupByProvidedId(t.fx.customer, providedId))!.teamId;
      expect(await read(`${prefix}-a`)).toBe(mark + 20);
      expect(await read(`${prefix}-c`)).toBe(mark + 15);
      expect(await read(`${prefix}-b`)).toBeGreaterThan(mark + 40);
      // Never twice: a kept number, an issued one, and a kept one whose group is gone get new numbers.
      const gone = await t.store.findUserGroupByProvidedId(t.fx.customer, `${prefix}-4`);
      await t.store.deleteUserGroup(t.fx.customer, gone!.teamId, gone!.version, batchContext);
      for (const [index, teamId] of [mark + 30, mark, mark + 1].entries())
        expect(await keep(`${prefix}-again-${index}`, teamId)).toBeGreaterThan(mark + 40);
      // The numbers between, never issued, are still keepable.
      expect(await keep(`${prefix}-late`, mark + 2)).toBe(mark + 2);
    });
  });

  describe('applyUserGroupWrites: one primitive, two policies', () => {
    const policies: UserGroupWritePolicy[] = [{ policy: 'all_or_nothing' }, { policy: 'per_batch' }];
    const deleteWrite = (group: UserGroupRecord): UserGroupWrite => ({
      kind: 'delete',
      tenant: t.fx.customer,
      teamId: group.teamId,
      providedId: group.providedId,
      expectedVersion: group.version,
      changes: changesOf(`delete ${group.providedId}`),
    });
    const atLine = (write: UserGroupWrite, line: number): UserGroupWrite =>
      write.kind === 'delete' ? write : { ...write, at: { line } };

    for (const policy of policies) {
      it(`${policy.policy}: applies creates, updates and deletes in their order, one audit event each`, async () => {
        const prefix = `${policy.policy}-${randomHex()}`;
        const kept = await createGroup(t.store, t.fx.customer, `${prefix}-kept`);
        const old = await createGroup(t.store, t.fx.customer, `${prefix}-old`);
        const events = await auditWrittenBy(t.store, t.fx.workspace.id, () =>
          t.store.applyUserGroupWrites(
            t.fx.customer,
            [
              createWrite(`${prefix}-root`),
              createWrite(`${prefix}-leaf`, { parentProvidedId: `${prefix}-root` }),
              updateWrite(kept, { name: 'Kept' }),
              deleteWrite(old),
            ],
            batchContext,
            policy,
          ),
        );
        expect(events.map((event) => [event.action, event.providedId])).toEqual([
          ['user_group.created', `${prefix}-root`],
          ['user_group.created', `${prefix}-leaf`],
          ['user_group.updated', `${prefix}-kept`],
          ['user_group.deleted', `${prefix}-old`],
        ]);
        expect((await t.store.findUserGroupByProvidedId(t.fx.customer, `${prefix}-leaf`))?.parentProvidedId).toBe(
          `${prefix}-root`,
        );
        expect((await t.store.findUserGroupByProvidedId(t.fx.customer, `${prefix}-kept`))?.name).toBe('Kept');
        expect(await t.store.findUserGroupByProvidedId(t.fx.customer, `${prefix}-old`)).toBeNull();
      });

      it(`${policy.policy}: rolls every write back when one fails, its refusal naming that write's line`, async () => {
        const prefix = `${policy.policy}-${randomHex()}`;
        const kept = await createGroup(t.store, t.fx.customer, `${prefix}-kept`);
        const parent = await createGroup(t.store, t.fx.customer, `${prefix}-parent`);
        await createGroup(t.store, t.fx.customer, `${prefix}-child`, { parentProvidedId: parent.providedId });
        for (const [failing, code] of [
          [atLine(createWrite(`${prefix}-kept`), 3), 'concurrent_change'],
          [atLine(createWrite(`${prefix}-orphan`, { parentProvidedId: `${prefix}-missing` }), 3), 'unknown_parent'],
          [deleteWrite(parent), 'user_group_has_children'],
        ] as const) {
          const before = await snapshot();
          const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
            const error: unknown = await t.store
              .applyUserGroupWrites(
                t.fx.customer,
                [atLine(createWrite(`${prefix}-fresh`), 1), atLine(updateWrite(kept, { name: 'Changed' }), 2), failing],
                batchContext,
                policy,
              )
              .then(
                () => undefined,
                (caught: unknown) => caught,
              );
            expect(isAppError(error) && [error.code, error.at]).toEqual([
              code,
              failing.kind === 'delete' ? undefined : { line: 3 },
            ]);
          });
          expect(events).toEqual([]);
          expect(await snapshot()).toEqual(before);
        }
      });
    }
  });
}
