import { beforeEach, describe, expect, it } from 'vitest';
import type { IdempotencyClaimAttempt, IdempotencyPerson } from '../../../src/domain/idempotency/idempotency.port.js';
import { auditContext, newApiToken, randomHex, T0, T1, T2 } from '../store-fixtures.js';
import type { ContractContext } from './context.js';

/** Before every timestamp the tests use: with it, nothing counts as expired or abandoned. */
const LONG_AGO = '2020-01-01T00:00:00.000Z';

export function describeIdempotencyKeyContract(t: ContractContext): void {
  describe('idempotency keys', () => {
    let tokenId: number;
    let otherTokenId: number;

    beforeEach(async () => {
      tokenId = (await t.store.insertApiToken(newApiToken(t.fx.customer), auditContext())).id;
      otherTokenId = (await t.store.insertApiToken(newApiToken(t.fx.customer), auditContext())).id;
    });

    /** An attempt of the first API token unless the overrides name another owner (a token, a person). */
    const attempt = (
      overrides: Partial<Omit<IdempotencyClaimAttempt, 'apiTokenId' | 'person'>> &
        ({ apiTokenId?: number } | { person: IdempotencyPerson }) = {},
    ): IdempotencyClaimAttempt =>
      ({
        ...('person' in overrides ? {} : { apiTokenId: tokenId }),
        keyHash: 'key-1',
        fingerprint: 'request-1',
        createdAt: T0,
        expiredBefore: LONG_AGO,
        abandonedBefore: LONG_AGO,
        maxLiveKeys: 100,
        maxLiveBytes: 1024 * 1024,
        ...overrides,
      }) as IdempotencyClaimAttempt;

    it("refuses a new key once the token's stored responses reach the byte limit, counting only its own live ones", async () => {
      const stored = 'x'.repeat(600);
      for (const keyHash of ['a', 'b']) {
        expect(await t.store.claimIdempotencyKey(attempt({ keyHash, maxLiveBytes: 1000 }))).toEqual({ claimed: true });
        expect(await t.store.completeIdempotencyKey(attempt({ keyHash }), stored)).toBe(true);
      }
      // 1 200 bytes kept: a third key is refused and not kept, whatever the count limit says.
      expect(await t.store.claimIdempotencyKey(attempt({ keyHash: 'c', maxLiveBytes: 1000 }))).toEqual({
        claimed: false,
        limitReached: 'bytes',
      });
      expect(await t.store.claimIdempotencyKey(attempt({ keyHash: 'c', maxLiveBytes: 1201 }))).toEqual({
        claimed: true,
      });
      // Another token's bytes are its own; expired records count for nobody.
      expect(
        await t.store.claimIdempotencyKey(attempt({ apiTokenId: otherTokenId, keyHash: 'd', maxLiveBytes: 1 })),
      ).toEqual({ claimed: true });
      expect(
        await t.store.claimIdempotencyKey(attempt({ keyHash: 'e', createdAt: T2, expiredBefore: T1, maxLiveBytes: 1 })),
      ).toEqual({ claimed: true });
    });

    it("keeps a token within its live-key limit, counting only unexpired keys and never another token's", async () => {
      for (const keyHash of ['a', 'b', 'c'])
        expect(await t.store.claimIdempotencyKey(attempt({ keyHash, maxLiveKeys: 3 }))).toEqual({ claimed: true });
      expect(await t.store.claimIdempotencyKey(attempt({ keyHash: 'd', maxLiveKeys: 3 }))).toEqual({
        claimed: false,
        limitReached: 'keys',
      });
      // Refused means not kept: the key is still free once there is room.
      expect(await t.store.claimIdempotencyKey(attempt({ keyHash: 'd', maxLiveKeys: 4 }))).toEqual({ claimed: true });
      // A key the token already holds is answered as before, limit or not.
      expect(await t.store.claimIdempotencyKey(attempt({ keyHash: 'a', createdAt: T1, maxLiveKeys: 1 }))).toMatchObject(
        { claimed: false, record: { createdAt: T0 } },
      );
      expect(
        await t.store.claimIdempotencyKey(attempt({ apiTokenId: otherTokenId, keyHash: 'e', maxLiveKeys: 1 })),
      ).toEqual({ claimed: true });
      // Keys created at or before expiredBefore are not live: they do not count.
      expect(
        await t.store.claimIdempotencyKey(attempt({ keyHash: 'f', createdAt: T2, expiredBefore: T0, maxLiveKeys: 1 })),
      ).toEqual({ claimed: true });
    });

    it('lets no two concurrent claims of one token pass the limit together', async () => {
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, index) =>
          t.store.claimIdempotencyKey(attempt({ keyHash: `race-${index}`, maxLiveKeys: 5 })),
        ),
      );
      expect(results.filter((result) => result.claimed)).toHaveLength(5);
      expect(results.filter((result) => 'limitReached' in result)).toHaveLength(7);
    });

    it('lets the first claim of a key win and shows the unfinished claim to the next one', async () => {
      expect(await t.store.claimIdempotencyKey(attempt())).toEqual({ claimed: true });
      expect(await t.store.claimIdempotencyKey(attempt({ createdAt: T1 }))).toEqual({
        claimed: false,
        record: { fingerprint: 'request-1', createdAt: T0, response: null },
      });
      expect(await t.store.claimIdempotencyKey(attempt({ createdAt: T1, fingerprint: 'request-2' }))).toEqual({
        claimed: false,
        record: { fingerprint: 'request-1', createdAt: T0, response: null },
      });
    });

    it('keeps keys apart per API token and per key', async () => {
      expect(await t.store.claimIdempotencyKey(attempt())).toEqual({ claimed: true });
      expect(await t.store.claimIdempotencyKey(attempt({ apiTokenId: otherTokenId }))).toEqual({ claimed: true });
      expect(await t.store.claimIdempotencyKey(attempt({ keyHash: 'key-2' }))).toEqual({ claimed: true });
    });

    describe("a person's keys", () => {
      const ada = (): IdempotencyPerson => ({
        workspaceId: t.fx.workspace.id,
        issuer: 'https://idp.example.com',
        subject: 'ada',
      });

      it('keeps them apart from every API token, from every other person, and per workspace', async () => {
        expect(await t.store.claimIdempotencyKey(attempt({ person: ada() }))).toEqual({ claimed: true });
        // The same key of an API token, of another person (another sub, another issuer with the same
        // sub, a sub that spells the issuer's tail) and of the same person in another workspace.
        expect(await t.store.claimIdempotencyKey(attempt())).toEqual({ claimed: true });
        for (const person of [
          { ...ada(), subject: 'grace' },
          { ...ada(), issuer: 'https://other-idp.example.com' },
          { ...ada(), issuer: 'https://idp.example', subject: '.com ada' },
          { ...ada(), workspaceId: t.fx.otherWorkspace.id },
        ])
          expect(await t.store.claimIdempotencyKey(attempt({ person }))).toEqual({ claimed: true });
        expect(await t.store.claimIdempotencyKey(attempt({ person: ada(), createdAt: T1 }))).toEqual({
          claimed: false,
          record: { fingerprint: 'request-1', createdAt: T0, response: null },
        });
      });

      it("stores, replays, releases and purges them as an API token's", async () => {
        const claim = { person: ada(), keyHash: 'key-1', createdAt: T0 };
        expect(await t.store.claimIdempotencyKey(attempt({ person: ada() }))).toEqual({ claimed: true });
        // Another owner's claim of the same key and time is not this one.
        expect(await t.store.completeIdempotencyKey({ ...claim, person: { ...ada(), subject: 'grace' } }, 'x')).toBe(
          false,
        );
        await t.store.releaseIdempotencyKey({ apiTokenId: tokenId, keyHash: 'key-1', createdAt: T0 });
        expect(await t.store.completeIdempotencyKey(claim, 'sealed response')).toBe(true);
        expect(await t.store.claimIdempotencyKey(attempt({ person: ada(), createdAt: T1 }))).toEqual({
          claimed: false,
          record: { fingerprint: 'request-1', createdAt: T0, response: 'sealed response' },
        });

        expect(await t.store.claimIdempotencyKey(attempt({ person: ada(), keyHash: 'key-2' }))).toEqual({
          claimed: true,
        });
        await t.store.releaseIdempotencyKey({ ...claim, keyHash: 'key-2' });
        expect(await t.store.claimIdempotencyKey(attempt({ person: ada(), keyHash: 'key-2', createdAt: T1 }))).toEqual({
          claimed: true,
        });

        expect(await t.store.purgeIdempotencyKeys(T0, 10)).toBe(1);
        expect(
          await t.store.claimIdempotencyKey(attempt({ person: ada(), fingerprint: 'request-2', createdAt: T2 })),
        ).toEqual({ claimed: true });
      });

      it('holds a person to the live-key and byte limits, counting only their own keys', async () => {
        for (const keyHash of ['a', 'b'])
          expect(await t.store.claimIdempotencyKey(attempt({ person: ada(), keyHash, maxLiveKeys: 2 }))).toEqual({
            claimed: true,
          });
        expect(await t.store.claimIdempotencyKey(attempt({ person: ada(), keyHash: 'c', maxLiveKeys: 2 }))).toEqual({
          claimed: false,
          limitReached: 'keys',
        });
        // The API token's and another person's count is their own.
        expect(await t.store.claimIdempotencyKey(attempt({ keyHash: 'c', maxLiveKeys: 1 }))).toEqual({ claimed: true });
        expect(
          await t.store.claimIdempotencyKey(
            attempt({ person: { ...ada(), subject: 'grace' }, keyHash: 'c', maxLiveKeys: 1 }),
          ),
        ).toEqual({ claimed: true });

        await t.store.completeIdempotencyKey({ person: ada(), keyHash: 'a', createdAt: T0 }, 'x'.repeat(600));
        expect(await t.store.claimIdempotencyKey(attempt({ person: ada(), keyHash: 'c', maxLiveBytes: 600 }))).toEqual({
          claimed: false,
          limitReached: 'bytes',
        });
      });

      it("lets no two concurrent claims of one person's key both win", async () => {
        const results = await Promise.all(
          Array.from({ length: 8 }, () => t.store.claimIdempotencyKey(attempt({ person: ada() }))),
        );
        expect(results.filter((result) => result.claimed)).toHaveLength(1);
      });
    });

    it('stores the response of the claim once, and only for the claim that holds the key', async () => {
      await t.store.claimIdempotencyKey(attempt());
      expect(
        await t.store.completeIdempotencyKey({ apiTokenId: tokenId, keyHash: 'key-1', createdAt: T1 }, 'not ours'),
      ).toBe(false);
      expect(
        await t.store.completeIdempotencyKey(
          { apiTokenId: tokenId, keyHash: 'key-1', createdAt: T0 },
          'sealed response',
        ),
      ).toBe(true);
      expect(
        await t.store.completeIdempotencyKey({ apiTokenId: tokenId, keyHash: 'key-1', createdAt: T0 }, 'again'),
      ).toBe(false);
      expect(await t.store.claimIdempotencyKey(attempt({ createdAt: T1 }))).toEqual({
        claimed: false,
        record: { fingerprint: 'request-1', createdAt: T0, response: 'sealed response' },
      });
    });

    it('releases an unfinished claim, so the key can be claimed again, but never a finished one', async () => {
      const claim = { apiTokenId: tokenId, keyHash: 'key-1', createdAt: T0 };
      await t.store.claimIdempotencyKey(attempt());
      await t.store.releaseIdempotencyKey({ ...claim, createdAt: T1 });
      expect((await t.store.claimIdempotencyKey(attempt({ createdAt: T1 }))).claimed).toBe(false);
      await t.store.releaseIdempotencyKey(claim);
      expect(await t.store.claimIdempotencyKey(attempt({ createdAt: T1 }))).toEqual({ claimed: true });

      const finished = { ...claim, createdAt: T1 };
      await t.store.completeIdempotencyKey(finished, 'sealed response');
      await t.store.releaseIdempotencyKey(finished);
      expect(await t.store.claimIdempotencyKey(attempt({ createdAt: T2 }))).toMatchObject({
        claimed: false,
        record: { response: 'sealed response' },
      });
    });

    it('replaces an expired record as if it were absent, whatever request it answered', async () => {
      await t.store.claimIdempotencyKey(attempt());
      await t.store.completeIdempotencyKey({ apiTokenId: tokenId, keyHash: 'key-1', createdAt: T0 }, 'sealed response');
      expect(
        await t.store.claimIdempotencyKey(attempt({ createdAt: T2, fingerprint: 'request-2', expiredBefore: T0 })),
      ).toEqual({ claimed: true });
      expect(await t.store.claimIdempotencyKey(attempt({ createdAt: T2, fingerprint: 'request-2' }))).toEqual({
        claimed: false,
        record: { fingerprint: 'request-2', createdAt: T2, response: null },
      });
    });

    it('lets a request with the same fingerprint take over an abandoned claim, and nothing else', async () => {
      await t.store.claimIdempotencyKey(attempt());
      // Not old enough yet, or another request: the claim stands.
      expect((await t.store.claimIdempotencyKey(attempt({ createdAt: T1, abandonedBefore: LONG_AGO }))).claimed).toBe(
        false,
      );
      expect(
        (await t.store.claimIdempotencyKey(attempt({ createdAt: T1, fingerprint: 'request-2', abandonedBefore: T0 })))
          .claimed,
      ).toBe(false);

      expect(await t.store.claimIdempotencyKey(attempt({ createdAt: T1, abandonedBefore: T0 }))).toEqual({
        claimed: true,
      });
      // The first claimant, back late, can neither record its response nor release the new claim.
      expect(
        await t.store.completeIdempotencyKey({ apiTokenId: tokenId, keyHash: 'key-1', createdAt: T0 }, 'late'),
      ).toBe(false);
      await t.store.releaseIdempotencyKey({ apiTokenId: tokenId, keyHash: 'key-1', createdAt: T0 });
      expect(await t.store.claimIdempotencyKey(attempt({ createdAt: T2 }))).toEqual({
        claimed: false,
        record: { fingerprint: 'request-1', createdAt: T1, response: null },
      });
    });

    it('never takes over a finished record that has not expired', async () => {
      await t.store.claimIdempotencyKey(attempt());
      await t.store.completeIdempotencyKey({ apiTokenId: tokenId, keyHash: 'key-1', createdAt: T0 }, 'sealed response');
      expect(await t.store.claimIdempotencyKey(attempt({ createdAt: T2, abandonedBefore: T1 }))).toMatchObject({
        claimed: false,
        record: { response: 'sealed response' },
      });
    });

    it('lets exactly one of concurrent claims of one key win', async () => {
      const results = await Promise.all(Array.from({ length: 10 }, () => t.store.claimIdempotencyKey(attempt())));
      expect(results.filter((result) => result.claimed)).toHaveLength(1);
    });

    it('purges at most `limit` records created at or before the bound, and no other', async () => {
      const keys = Array.from({ length: 5 }, () => randomHex());
      for (const keyHash of keys) await t.store.claimIdempotencyKey(attempt({ keyHash, createdAt: T0 }));
      await t.store.claimIdempotencyKey(attempt({ keyHash: 'young', createdAt: T2 }));

      expect(await t.store.purgeIdempotencyKeys(T1, 3)).toBe(3);
      expect(await t.store.purgeIdempotencyKeys(T1, 3)).toBe(2);
      expect(await t.store.purgeIdempotencyKeys(T1, 3)).toBe(0);
      // The purged keys are free again; the young one still stands.
      for (const keyHash of keys) {
        expect(
          await t.store.claimIdempotencyKey(attempt({ keyHash, fingerprint: 'request-2', createdAt: T2 })),
        ).toEqual({ claimed: true });
      }
      expect(
        (await t.store.claimIdempotencyKey(attempt({ keyHash: 'young', fingerprint: 'request-2', createdAt: T2 })))
          .claimed,
      ).toBe(false);
    });
  });
}
