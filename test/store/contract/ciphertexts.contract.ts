import { describe, expect, it } from 'vitest';
import { createKeyring } from '../../../src/domain/encryption-keys/keyring.js';
import type { UserGroupRecord } from '../../../src/domain/user-groups/user-group.records.js';
import { generateEncryptionKey } from '../../../src/domain/secrets.js';
import { auditContext, auditWrittenBy, createGroup, newApiToken, randomHex, T0, T1, T2 } from '../store-fixtures.js';
import type { ContractContext } from './context.js';

/** Real ciphertexts of two keys: the stores find the key id inside them. */
const oldKey = createKeyring([generateEncryptionKey()]);
const newKey = createKeyring([generateEncryptionKey()]);
const token = () => `ugt_${randomHex()}`;

export function describeCiphertextContract(t: ContractContext): void {
  /** Groups in both environments and both workspaces: under the old key, `a` under the new key too. */
  async function groupsUnderTwoKeys(): Promise<{ old: UserGroupRecord[]; current: UserGroupRecord[] }> {
    const old: UserGroupRecord[] = [];
    const current: UserGroupRecord[] = [];
    for (const [tenant, name] of [
      [t.fx.customer, 'c'],
      [t.fx.testing, 't'],
      [t.fx.otherCustomer, 'o'],
    ] as const) {
      for (let i = 0; i < 3; i++) {
        old.push(await createGroup(t.store, tenant, `${name}-old-${i}`, { tokenCiphertext: oldKey.encrypt(token()) }));
      }
      current.push(await createGroup(t.store, tenant, `${name}-new`, { tokenCiphertext: newKey.encrypt(token()) }));
    }
    return { old, current };
  }

  const stored = (group: UserGroupRecord) => ({
    kind: 'user_group_token' as const,
    id: group.teamId,
    ciphertext: group.tokenCiphertext,
  });

  describe('ciphertexts for key rotation', () => {
    it('lists the ciphertexts not under a key, across tenants, in id order, a page at a time', async () => {
      const { old } = await groupsUnderTwoKeys();
      const list = (afterId: number, limit: number) =>
        t.store.listCiphertextsNotUnderKey('user_group_token', newKey.keyId, afterId, limit);
      expect(await list(0, 100)).toEqual(old.map(stored));
      const firstPage = await list(0, 4);
      expect(firstPage).toEqual(old.slice(0, 4).map(stored));
      expect(await list(firstPage.at(-1)!.id, 4)).toEqual(old.slice(4, 8).map(stored));
      expect(await list(old.at(-1)!.teamId, 4)).toEqual([]);
      // Under the old key's id, the other groups are the ones left.
      expect(
        (await t.store.listCiphertextsNotUnderKey('user_group_token', oldKey.keyId, 0, 100)).map(
          (row) => row.ciphertext,
        ),
      ).toEqual(
        (await groupsOf(t))
          .filter((group) => !old.some((o) => o.teamId === group.teamId))
          .map((group) => group.tokenCiphertext),
      );
    });

    it('counts the ciphertexts under each key id', async () => {
      await groupsUnderTwoKeys();
      const counts = await t.store.countCiphertextsByKey();
      expect(counts.sort((a, b) => b.count - a.count)).toEqual([
        { kind: 'user_group_token', keyId: oldKey.keyId, count: 9 },
        { kind: 'user_group_token', keyId: newKey.keyId, count: 3 },
      ]);
    });

    it('counts nothing on a database without ciphertexts', async () => {
      expect(await t.store.countCiphertextsByKey()).toEqual([]);
    });

    it('replaces ciphertexts in place: no version, update time or audit event changes', async () => {
      const { old } = await groupsUnderTwoKeys();
      const replacements = old.map((group) => ({
        ...stored(group),
        replacement: newKey.encrypt(oldKey.decrypt(group.tokenCiphertext)),
      }));
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        expect(await t.store.replaceCiphertexts(replacements)).toBe(old.length);
      });
      expect(events).toEqual([]);
      expect(await t.store.listCiphertextsNotUnderKey('user_group_token', newKey.keyId, 0, 100)).toEqual([]);
      for (const [index, group] of old.entries()) {
        const now = await t.store.findUserGroupByTeamId(
          { workspaceId: group.workspaceId, environment: group.environment },
          group.teamId,
        );
        expect(now).toEqual({ ...group, tokenCiphertext: replacements[index]!.replacement });
      }
    });

    it("rewrites a hosted token's keyed lookup hash with its ciphertext, and only where the replacement brings one", async () => {
      const hosted = 'e3b0c442-98fc-4c14-9afb-f4c8996fb924';
      const group = await createGroup(t.store, t.fx.customer, 'hosted', {
        tokenHash: oldKey.lookupHashes(hosted)[0]!,
        tokenCiphertext: oldKey.encrypt(hosted),
      });
      const native = await createGroup(t.store, t.fx.customer, 'native', { tokenCiphertext: oldKey.encrypt(token()) });
      const rehashed = newKey.lookupHashes(hosted)[0]!;
      expect(
        await t.store.replaceCiphertexts([
          { ...stored(group), replacement: newKey.encrypt(hosted), lookupHash: rehashed },
          { ...stored(native), replacement: newKey.encrypt('x') },
        ]),
      ).toBe(2);
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, rehashed)).toMatchObject({ teamId: group.teamId });
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, group.tokenHash)).toBeNull();
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, native.tokenHash)).toMatchObject({
        teamId: native.teamId,
      });
    });

    it('leaves a row alone that changed or went since it was read, and counts only what it wrote', async () => {
      const [rotated, deleted, kept] = await Promise.all(
        ['rotated', 'deleted', 'kept'].map((id) =>
          createGroup(t.store, t.fx.customer, id, { tokenCiphertext: oldKey.encrypt(token()) }),
        ),
      );
      const read = [rotated!, deleted!, kept!].map(stored);
      const tokenHash = randomHex();
      const rotation = {
        tenant: t.fx.customer,
        currentTokenHash: rotated!.tokenHash,
        newTokenHash: tokenHash,
        newTokenCiphertext: oldKey.encrypt(token()),
        updatedAt: T1,
      };
      const afterRotation = await t.store.rotateUserGroupToken(rotation, auditContext());
      await t.store.deleteUserGroup(t.fx.customer, deleted!.teamId, deleted!.version, auditContext());

      const written = await t.store.replaceCiphertexts(
        read.map((row) => ({ ...row, replacement: newKey.encrypt(oldKey.decrypt(row.ciphertext)) })),
      );
      expect(written).toBe(1);
      expect(await t.store.findUserGroupByTeamId(t.fx.customer, rotated!.teamId)).toEqual(afterRotation);
      expect(await t.store.findUserGroupByTeamId(t.fx.customer, deleted!.teamId)).toBeNull();
      const keptNow = await t.store.findUserGroupByTeamId(t.fx.customer, kept!.teamId);
      expect(newKey.decrypt(keptNow!.tokenCiphertext)).toBe(oldKey.decrypt(kept!.tokenCiphertext));
      expect(await t.store.replaceCiphertexts([])).toBe(0);
    });

    it('covers the stored responses of safe retries too: finished ones are listed, counted and replaced; unfinished claims hold none', async () => {
      const apiTokenId = (await t.store.insertApiToken(newApiToken(t.fx.customer), auditContext())).id;
      const claim = (keyHash: string) => ({
        apiTokenId,
        keyHash,
        fingerprint: 'f',
        createdAt: T1,
        expiredBefore: T0,
        abandonedBefore: T0,
        maxLiveKeys: 10,
        maxLiveBytes: 1024 * 1024,
      });
      const response = oldKey.encrypt('{"status":200}');
      expect(await t.store.claimIdempotencyKey(claim('finished'))).toEqual({ claimed: true });
      expect(await t.store.completeIdempotencyKey(claim('finished'), response)).toBe(true);
      expect(await t.store.claimIdempotencyKey(claim('running'))).toEqual({ claimed: true });

      expect(await t.store.countCiphertextsByKey()).toEqual([
        { kind: 'idempotent_response', keyId: oldKey.keyId, count: 1 },
      ]);
      const [listed, ...rest] = await t.store.listCiphertextsNotUnderKey('idempotent_response', newKey.keyId, 0, 100);
      expect(rest).toEqual([]);
      expect(listed).toEqual({ kind: 'idempotent_response', id: expect.any(Number), ciphertext: response });
      const replacement = newKey.encrypt(oldKey.decrypt(response));
      expect(await t.store.replaceCiphertexts([{ ...listed!, replacement }])).toBe(1);
      expect(await t.store.countCiphertextsByKey()).toEqual([
        { kind: 'idempotent_response', keyId: newKey.keyId, count: 1 },
      ]);
      const replayed = await t.store.claimIdempotencyKey(claim('finished'));
      expect(replayed).toEqual({ claimed: false, record: { fingerprint: 'f', createdAt: T1, response: replacement } });
    });

    it('covers the private halves of the signing keys too: listed, counted and replaced in place', async () => {
      const privateKey = oldKey.encrypt('{"kty":"EC","d":"private"}');
      const key = await t.store.insertFirstSigningKey(
        {
          ...t.fx.customer,
          kid: `kid-${randomHex()}`,
          publicJwk: { kty: 'EC' },
          privateKeyCiphertext: privateKey,
          createdAt: T1,
        },
        auditContext(),
      );
      expect(await t.store.countCiphertextsByKey()).toEqual([{ kind: 'signing_key', keyId: oldKey.keyId, count: 1 }]);
      const [listed, ...rest] = await t.store.listCiphertextsNotUnderKey('signing_key', newKey.keyId, 0, 100);
      expect(rest).toEqual([]);
      expect(listed).toEqual({ kind: 'signing_key', id: key.id, ciphertext: privateKey });
      const replacement = newKey.encrypt(oldKey.decrypt(privateKey));
      expect(await t.store.replaceCiphertexts([{ ...listed!, replacement }])).toBe(1);
      expect(await t.store.listSigningKeys(t.fx.customer, T1)).toEqual([{ ...key, privateKeyCiphertext: replacement }]);
    });

    it('records a key rotation as one audit event of the workspace, with no environment', async () => {
      const changes = { key_ids_in_use: { before: [oldKey.keyId], after: [newKey.keyId] } };
      const events = await auditWrittenBy(t.store, t.fx.otherWorkspace.id, () =>
        t.store.recordKeyRotation(t.fx.otherWorkspace.id, auditContext({ at: T2, requestId: null, changes })),
      );
      expect(events).toEqual([
        {
          id: expect.any(Number),
          at: T2,
          workspaceId: t.fx.otherWorkspace.id,
          environment: null,
          actor: { type: 'cli' },
          action: 'encryption_key.rotated',
          teamId: null,
          providedId: null,
          changes,
          requestId: null,
          syncId: null,
        },
      ]);
      expect(
        await t.store.listAuditEvents({ workspaceId: t.fx.workspace.id, action: 'encryption_key.rotated', limit: 10 }),
      ).toEqual([]);
    });
  });
}

/** Every group of the fixture's tenants, in team id order. */
async function groupsOf(t: ContractContext): Promise<UserGroupRecord[]> {
  const all = await Promise.all(
    [t.fx.customer, t.fx.testing, t.fx.otherCustomer].map((tenant) => t.store.listUserGroups({ tenant, limit: 1000 })),
  );
  return all.flat().sort((a, b) => a.teamId - b.teamId);
}
