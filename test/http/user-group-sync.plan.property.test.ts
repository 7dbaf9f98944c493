// Sync (docs/api.md#sync-tenants-as-code), "the plan is exactly what the apply does": over random stored trees and random files
// (moves, new groups, detaches, prunes), a dry run and an apply of the same file refuse alike, or plan
// the same items and leave the groups exactly as the plan said.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { syncCall, syncOk, type SyncLine } from './sync-helpers.js';
import { adminCaller } from '../support/callers.js';
import { uniqueId } from '../support/unique-id.js';
import { useTestApp, type TestApp } from '../support/test-app.js';

/** Groups a case draws on: the first STORED may exist before the sync, all may be in its file. */
const POOL = 7;
const STORED = 5;
const NUM_RUNS = 150;

interface Case {
  /** For each stored group: its parent (an earlier stored group, by remainder) or null, and whether it carries the prune tag. */
  stored: Array<{ parent: number | null; tagged: boolean }>;
  /** The file: a group of the pool, and its parent as the line says (undefined: absent; null: detach). */
  file: Array<{ group: number; parent: number | null | undefined }>;
  prune: boolean;
}

const anyCase: fc.Arbitrary<Case> = fc.record({
  stored: fc.array(fc.record({ parent: fc.option(fc.nat(), { nil: null, freq: 4 }), tagged: fc.boolean() }), {
    minLength: STORED,
    maxLength: STORED,
  }),
  file: fc.uniqueArray(
    fc.record({
      group: fc.nat(POOL - 1),
      parent: fc.oneof(fc.constant(undefined), fc.constant(null), fc.nat(POOL - 1)),
    }),
    { selector: (line) => line.group, maxLength: POOL },
  ),
  prune: fc.boolean(),
});

/** The parents of the groups that exist, by provided id. */
async function tree(t: TestApp, ids: string[]): Promise<Map<string, string | null>> {
  const groups = await t.runtime.store.findUserGroupsByProvidedIds((await adminCaller(t)).tenant, ids);
  return new Map(groups.map((group) => [group.providedId, group.parentProvidedId]));
}

describe('POST /api/admin/user_groups/sync: the dry run is the apply', () => {
  const fixture = useTestApp();

  it('refuses alike, or plans the same items and leaves the tree the plan said', { timeout: 600_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(anyCase, async ({ stored, file, prune }) => {
        const { t } = fixture;
        const prefix = uniqueId('prop');
        const tag = `${prefix}-tag`;
        const id = (n: number) => `${prefix}-${n}`;
        const ids = Array.from({ length: POOL }, (_, n) => id(n));

        // A valid stored forest: a parent is an earlier group, and no deeper than the depth rule allows.
        const depth: number[] = [];
        const seed: SyncLine[] = stored.map(({ parent, tagged }, n) => {
          // Any earlier group (most stored groups have a parent), unless that would be too deep.
          const above = parent === null || n === 0 ? null : parent % n;
          const linked = above !== null && depth[above]! < 4 ? above : null;
          depth[n] = linked === null ? 1 : depth[linked]! + 1;
          return {
            user_group_id: id(n),
            ...(linked === null ? {} : { parent_user_group_id: id(linked) }),
            tags: tagged ? [tag] : [],
          };
        });
        await syncOk(t, seed);

        const lines: SyncLine[] = file.map(({ group, parent }) => ({
          user_group_id: id(group),
          ...(parent === undefined ? {} : { parent_user_group_id: parent === null ? null : id(parent) }),
        }));
        const request = { rawBody: JSON.stringify(lines), array: true, ...(prune ? { prune: tag } : {}) };
        const before = await tree(t, ids);
        const dry = await syncCall(t, lines, { ...request, dryRun: true });
        expect(await tree(t, ids)).toEqual(before);
        const applied = await syncCall(t, lines, request);

        if (dry.status !== 200) {
          expect(applied.status).toBe(dry.status);
          const { request_id: _dryRequest, ...refusal } = dry.body.error;
          const { request_id: _request, ...appliedRefusal } = applied.body.error;
          expect(appliedRefusal).toEqual(refusal);
          expect(await tree(t, ids)).toEqual(before);
          return;
        }
        expect(applied.status, JSON.stringify(applied.body)).toBe(200);
        const { plan, summary } = dry.body.sync;
        expect(applied.body.sync.plan).toEqual(plan);
        expect(applied.body.sync.summary).toEqual(summary);

        // The tree the plan said: each line's parent as it says, pruned groups gone, the rest as it was.
        const expected = new Map(before);
        for (const item of plan as Array<{ action: string; user_group_id: string }>)
          if (item.action === 'delete') expected.delete(item.user_group_id);
        for (const { group, parent } of file) {
          const current = expected.get(id(group));
          expected.set(id(group), parent === undefined ? (current ?? null) : parent === null ? null : id(parent));
        }
        expect(await tree(t, ids)).toEqual(expected);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
