// Which steps of a sync an engine may write together: a pure rule, without a database.
import { describe, expect, it } from 'vitest';
import { syncWriteRuns, type SyncStep } from '../../src/domain/user-group-sync/user-group-sync.rules.js';
import type { UserGroupPatch } from '../../src/domain/user-groups/user-group.records.js';
import type { Tenant } from '../../src/domain/tenancy.js';

type Group = { providedId: string; parentProvidedId: string | null };
const tenant: Tenant = { workspaceId: 1, environment: 'Customer' };
const T = '2026-11-26T10:00:00.000Z';

const create = (providedId: string, parentProvidedId: string | null = null): SyncStep<Group> => ({
  kind: 'create',
  at: { line: 1 },
  group: { providedId, parentProvidedId },
  changes: {},
});
const update = (teamId: number, patch: UserGroupPatch): SyncStep<Group> => ({
  kind: 'update',
  at: { line: 1 },
  update: { tenant, teamId, expectedVersion: 1, patch, updatedAt: T },
  changes: {},
});
const remove = (teamId: number): SyncStep<Group> => ({
  kind: 'delete',
  tenant,
  teamId,
  providedId: `g${teamId}`,
  expectedVersion: 1,
  changes: {},
});

/** Each run as its kind and the steps it holds, named. */
const shape = (steps: SyncStep<Group>[], maxRun = 1000) =>
  syncWriteRuns(steps, maxRun).map((run) =>
    run.kind === 'single'
      ? ['single', name(run.step)]
      : ['batch', run.steps.map(name), run.updates.map(name), run.creates.map(name)],
  );
const name = (step: SyncStep<Group>) =>
  step.kind === 'create'
    ? step.group.providedId
    : step.kind === 'update'
      ? `u${step.update.teamId}`
      : `d${step.teamId}`;

describe('syncWriteRuns', () => {
  it('batches creates and updates of names, flags, tags and mappings, keeping the plan order', () => {
    expect(
      shape([
        update(1, { name: 'A', tags: ['x'] }),
        create('a'),
        update(2, { isDemoGroup: true, mapping: [] }),
        create('b', 'existing'),
      ]),
    ).toEqual([['batch', ['u1', 'a', 'u2', 'b'], ['u1', 'u2'], ['a', 'b']]]);
  });

  it('starts a new run for a create under a group the run creates', () => {
    expect(shape([create('a'), create('b'), create('c', 'a'), create('d', 'b')])).toEqual([
      ['batch', ['a', 'b'], [], ['a', 'b']],
      ['batch', ['c', 'd'], [], ['c', 'd']],
    ]);
  });

  it('writes on its own, in its place, an update that moves a group or changes what its tree merges, and a delete', () => {
    for (const patch of [
      { parentProvidedId: 'p' },
      { parentProvidedId: null },
      { properties: { a: 1 } },
      { accessRules: [] },
      { providedId: 'renamed' },
      { tokenHash: 'h', tokenCiphertext: 'c' },
    ] satisfies UserGroupPatch[])
      expect(shape([create('a'), update(1, patch), create('b')])).toEqual([
        ['batch', ['a'], [], ['a']],
        ['single', 'u1'],
        ['batch', ['b'], [], ['b']],
      ]);
    expect(shape([create('a'), remove(1), remove(2)])).toEqual([
      ['batch', ['a'], [], ['a']],
      ['single', 'd1'],
      ['single', 'd2'],
    ]);
  });

  it('closes a run at the size it is given', () => {
    expect(shape([create('a'), create('b'), create('c')], 2)).toEqual([
      ['batch', ['a', 'b'], [], ['a', 'b']],
      ['batch', ['c'], [], ['c']],
    ]);
  });
});
