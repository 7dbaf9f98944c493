import { describe, expect, it } from 'vitest';
import type { NewSigningKey } from '../../../src/domain/signing-keys/signing-key.records.js';
import { auditContext, auditWrittenBy, newSigningKey, T0, T1, T2 } from '../store-fixtures.js';
import type { ContractContext } from './context.js';

/** Every key retired since this is still listed: the suite sees an issuer's whole history. */
const ALL_TIME = '1970-01-01T00:00:00.000Z';

/**
 * The suite's one way of making, storing and reading keys, of a workspace's Customer issuer: the
 * first keys, rotations and their races (signing-keys.contract.ts has the issuers and the bound).
 */
function signingKeys(t: ContractContext) {
  const newKey = (workspaceId = t.fx.workspace.id, createdAt = T0): NewSigningKey =>
    newSigningKey({ workspaceId, environment: 'Customer' }, createdAt);
  return {
    newKey,
    list: (workspaceId = t.fx.workspace.id) =>
      t.store.listSigningKeys({ workspaceId, environment: 'Customer' }, ALL_TIME),
    insertFirst: (key: NewSigningKey) => t.store.insertFirstSigningKey(key, auditContext({ at: key.createdAt })),
    rotate: async (key: NewSigningKey) => {
      const rotation = await t.store.rotateSigningKey(key, auditContext({ at: key.createdAt }), {
        publishedSince: ALL_TIME,
        force: false,
      });
      if (rotation.status !== 'rotated') throw new Error(`rotation refused: ${rotation.status}`);
      expect(rotation.dropped).toEqual([]);
      return { current: rotation.current, retired: rotation.retired };
    },
    audited: (action: () => Promise<unknown>) => auditWrittenBy(t.store, t.fx.workspace.id, action),
  };
}

export function describeSigningKeyChangeContract(t: ContractContext): void {
  describe('signing keys: first keys and rotations', () => {
    it('makes the first key current, audited, and hands it back as given', async () => {
      const keys = signingKeys(t);
      expect(await keys.list()).toEqual([]);
      const input = keys.newKey();
      let first: unknown;
      const events = await keys.audited(async () => {
        first = await keys.insertFirst(input);
      });
      expect(first).toEqual({ ...input, id: expect.any(Number), retiredAt: null });
      expect(await keys.list()).toEqual([first]);
      expect(events).toMatchObject([
        {
          action: 'signing_key.created',
          environment: 'Customer',
          changes: { kid: { before: null, after: input.kid } },
        },
      ]);
      expect(JSON.stringify(events)).not.toContain(input.privateKeyCiphertext);
    });

    it('keeps the first key when another first key comes, writing nothing', async () => {
      const keys = signingKeys(t);
      const first = await keys.insertFirst(keys.newKey());
      const events = await keys.audited(async () => {
        expect(await keys.insertFirst(keys.newKey(t.fx.workspace.id, T1))).toEqual(first);
      });
      expect(events).toEqual([]);
      expect(await keys.list()).toEqual([first]);
    });

    it('makes one first key of several offered at once, and hands every caller that one', async () => {
      const keys = signingKeys(t);
      const offered = Array.from({ length: 5 }, () => keys.newKey());
      let results: Array<{ kid: string }> = [];
      const events = await keys.audited(async () => {
        results = await Promise.all(offered.map((key) => keys.insertFirst(key)));
      });
      const stored = await keys.list();
      expect(stored).toHaveLength(1);
      expect(offered.map((key) => key.kid)).toContain(stored[0]!.kid);
      expect(results).toEqual(offered.map(() => stored[0]));
      expect(events).toHaveLength(1);
    });

    it('rotates: retires the current key when the new one is made, audited, and lists the newest first', async () => {
      const keys = signingKeys(t);
      const first = await keys.insertFirst(keys.newKey());
      const secondInput = keys.newKey(t.fx.workspace.id, T1);
      let rotated: unknown;
      const events = await keys.audited(async () => {
        rotated = await keys.rotate(secondInput);
      });
      const second = { ...secondInput, id: expect.any(Number), retiredAt: null };
      expect(rotated).toEqual({ current: second, retired: { ...first, retiredAt: T1 } });
      expect(events).toMatchObject([
        {
          action: 'signing_key.rotated',
          environment: 'Customer',
          changes: { kid: { before: first.kid, after: secondInput.kid } },
        },
      ]);
      const third = await keys.rotate(keys.newKey(t.fx.workspace.id, T2));
      expect(third.retired).toMatchObject({ kid: secondInput.kid, retiredAt: T2 });
      expect(await keys.list()).toEqual([third.current, third.retired, { ...first, retiredAt: T1 }]);
    });

    it('rotates into a first key when the workspace has none', async () => {
      const keys = signingKeys(t);
      const input = keys.newKey();
      let rotated: unknown;
      const events = await keys.audited(async () => {
        rotated = await keys.rotate(input);
      });
      expect(rotated).toEqual({ current: { ...input, id: expect.any(Number), retiredAt: null }, retired: null });
      expect(events).toMatchObject([{ action: 'signing_key.created' }]);
    });

    it("keeps each workspace's keys apart", async () => {
      const keys = signingKeys(t);
      const mine = await keys.insertFirst(keys.newKey());
      const theirs = await keys.insertFirst(keys.newKey(t.fx.otherWorkspace.id));
      expect(theirs.id).not.toBe(mine.id);
      const { current } = await keys.rotate(keys.newKey(t.fx.workspace.id, T1));
      expect(await keys.list(t.fx.otherWorkspace.id)).toEqual([theirs]);
      expect(await keys.list()).toEqual([current, { ...mine, retiredAt: T1 }]);
    });

    it('leaves one current key when a first key and a rotation come at once', async () => {
      const keys = signingKeys(t);
      const [first, rotated] = await Promise.all([keys.insertFirst(keys.newKey()), keys.rotate(keys.newKey())]);
      const stored = await keys.list();
      expect(stored.filter((key) => key.retiredAt === null)).toEqual([rotated.current]);
      // Either the first key came first and the rotation retired it, or the rotation made the first key.
      expect(stored).toEqual(rotated.retired ? [rotated.current, rotated.retired] : [first]);
    });

    it('leaves one current key after several rotations at once, each retiring the key before it', async () => {
      const keys = signingKeys(t);
      const first = await keys.insertFirst(keys.newKey());
      const results = await Promise.all([T1, T1, T1].map((at) => keys.rotate(keys.newKey(t.fx.workspace.id, at))));
      const stored = await keys.list();
      expect(stored).toHaveLength(4);
      expect(stored.filter((key) => key.retiredAt === null)).toHaveLength(1);
      const retiredIds = results.map((result) => result.retired?.id).sort((a, b) => a! - b!);
      const madeIds = results.map((result) => result.current.id);
      // The rotations form one chain: each retired the first key or a key another of them made.
      expect(retiredIds).toEqual([first.id, ...madeIds].sort((a, b) => a - b).slice(0, 3));
    });
  });
}
