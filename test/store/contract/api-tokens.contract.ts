import { describe, expect, it } from 'vitest';
import type { AppError } from '../../../src/domain/errors.js';
import {
  auditContext,
  auditWrittenBy,
  expectAppError,
  newApiToken,
  newGroup,
  randomHex,
  recordingTokenCheck,
  T1,
  T2,
} from '../store-fixtures.js';
import type { ContractContext } from './context.js';

export function describeApiTokenContract(t: ContractContext): void {
  describe('api tokens', () => {
    it('inserts a token and finds it by hash, without exposing the hash', async () => {
      const input = newApiToken(t.fx.testing, { name: 'ci', scope: 'admin' });
      const record = await t.store.insertApiToken(input, auditContext());
      expect(record).toEqual({
        id: expect.any(Number),
        workspaceId: t.fx.workspace.id,
        environment: 'Testing',
        name: 'ci',
        scope: 'admin',
        rateLimit: null,
        createdAt: input.createdAt,
        lastUsedAt: null,
        revokedAt: null,
      });
      expect(await t.store.findApiTokenByHash(input.tokenHash)).toEqual(record);
      expect(await t.store.findApiTokenByHash('0'.repeat(64))).toBeNull();
    });

    it('lists the tokens of one workspace only, in id order', async () => {
      const first = await t.store.insertApiToken(newApiToken(t.fx.customer, { name: 'one' }), auditContext());
      const second = await t.store.insertApiToken(newApiToken(t.fx.testing, { name: 'two' }), auditContext());
      await t.store.insertApiToken(newApiToken(t.fx.otherCustomer), auditContext());
      expect(await t.store.listApiTokens(t.fx.workspace.id)).toEqual([first, second]);
    });

    it('revokes a live token at once, and only once, and only inside its workspace', async () => {
      const input = newApiToken(t.fx.customer);
      const record = await t.store.insertApiToken(input, auditContext());
      expect(await t.store.revokeApiToken(t.fx.otherWorkspace.id, record.id, auditContext())).toBeNull();
      expect(await t.store.findApiTokenByHash(input.tokenHash)).toEqual(record);

      const revoked = await t.store.revokeApiToken(t.fx.workspace.id, record.id, auditContext({ at: T1 }));
      expect(revoked).toEqual({ ...record, revokedAt: T1 });
      expect(await t.store.findApiTokenByHash(input.tokenHash)).toBeNull();
      expect(await t.store.revokeApiToken(t.fx.workspace.id, record.id, auditContext())).toBeNull();
      // Listings show live tokens only: a revoked one is gone for good.
      expect(await t.store.listApiTokens(t.fx.workspace.id)).toEqual([]);
    });

    it("settles a remembered token's check from the hot read that carries it: live with its limit, revoked or unknown refused, never read twice", async () => {
      const input = newApiToken(t.fx.customer, { rateLimit: { perSecond: 5, burst: 7 } });
      const token = { ...(await t.store.insertApiToken(input, auditContext())), tokenHash: input.tokenHash };
      const { group } = await t.store.insertUserGroupIfAbsent(newGroup(t.fx.customer, 'checked'), auditContext());
      const live = recordingTokenCheck(token);
      expect(await t.store.findUserGroupByProvidedId(t.fx.customer, 'checked', live.check)).toEqual(group);
      // Settled once, the check is not read again, whatever the next lookup finds.
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, randomHex(), live.check)).toBeNull();
      expect(live.settled).toEqual([{ live: true, rateLimit: { perSecond: 5, burst: 7 } }]);
      // A lookup that finds no group settles its check all the same.
      const missing = recordingTokenCheck(token);
      expect(await t.store.findUserGroupByTokenHash(t.fx.customer, randomHex(), missing.check)).toBeNull();
      expect(missing.settled).toEqual([{ live: true, rateLimit: { perSecond: 5, burst: 7 } }]);

      await t.store.revokeApiToken(t.fx.workspace.id, token.id, auditContext());
      const revoked = recordingTokenCheck(token);
      await expectAppError(
        t.store.findUserGroupByProvidedId(t.fx.customer, 'checked', revoked.check),
        'invalid_api_token',
      );
      expect(revoked.settled).toHaveLength(1);
      expect(revoked.settled[0]?.live).not.toBe(true);
      const unknown = recordingTokenCheck({ id: token.id + 1000, tokenHash: randomHex() });
      await expectAppError(
        t.store.findUserGroupByTokenHash(t.fx.customer, group.tokenHash, unknown.check),
        'invalid_api_token',
      );
    });

    it('answers each of the hot reads asked for in one turn with its own group and its own token check', async () => {
      const tokenOf = async (tenant: typeof t.fx.customer) => {
        const input = newApiToken(tenant);
        return { ...(await t.store.insertApiToken(input, auditContext())), tokenHash: input.tokenHash };
      };
      const [live, revoked, other] = [
        await tokenOf(t.fx.customer),
        await tokenOf(t.fx.customer),
        await tokenOf(t.fx.otherCustomer),
      ];
      await t.store.revokeApiToken(t.fx.workspace.id, revoked.id, auditContext());
      const group = async (tenant: typeof t.fx.customer, id: string) =>
        (await t.store.insertUserGroupIfAbsent(newGroup(tenant, id), auditContext())).group;
      const [mine, theirs, testing] = [
        await group(t.fx.customer, 'same-id'),
        await group(t.fx.otherCustomer, 'same-id'),
        await group(t.fx.testing, 'testing-only'),
      ];
      const checks = [
        recordingTokenCheck(live),
        recordingTokenCheck(revoked),
        recordingTokenCheck(other),
        recordingTokenCheck(live),
      ];
      const outcomes = await Promise.allSettled([
        t.store.findUserGroupByProvidedId(t.fx.customer, 'same-id', checks[0]!.check),
        t.store.findUserGroupByProvidedId(t.fx.customer, 'same-id', checks[1]!.check),
        t.store.findUserGroupByProvidedId(t.fx.otherCustomer, 'same-id', checks[2]!.check),
        t.store.findUserGroupByProvidedId(t.fx.customer, 'testing-only', checks[3]!.check),
        t.store.findUserGroupByProvidedId(t.fx.testing, 'testing-only'),
        t.store.findUserGroupByTokenHash(t.fx.customer, mine.tokenHash),
        t.store.findUserGroupByTokenHash(t.fx.customer, theirs.tokenHash),
      ]);
      expect(
        outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : (outcome.reason as AppError).code)),
      ).toEqual([mine, 'invalid_api_token', theirs, null, testing, mine, null]);
      expect(checks.map((check) => check.settled.map((state) => state?.live))).toEqual([
        [true],
        [false],
        [true],
        [true],
      ]);
    });

    it('records the last use of a token', async () => {
      const input = newApiToken(t.fx.customer);
      const record = await t.store.insertApiToken(input, auditContext());
      await t.store.recordApiTokenUse(record.id, T2);
      expect(await t.store.findApiTokenByHash(input.tokenHash)).toEqual({ ...record, lastUsedAt: T2 });
    });

    it("stores a token's own rate limit, fractions included, and null for the default", async () => {
      const limited = newApiToken(t.fx.customer, { rateLimit: { perSecond: 0.5, burst: 30 } });
      const record = await t.store.insertApiToken(limited, auditContext());
      expect(record.rateLimit).toEqual({ perSecond: 0.5, burst: 30 });
      expect(await t.store.findApiTokenByHash(limited.tokenHash)).toEqual(record);
      const plain = await t.store.insertApiToken(newApiToken(t.fx.customer, { rateLimit: null }), auditContext());
      expect(plain.rateLimit).toBeNull();
    });

    it("updates a live token's rate limit with its before and after in one audit event, and only inside its workspace", async () => {
      const input = newApiToken(t.fx.testing);
      const record = await t.store.insertApiToken(input, auditContext());
      const update = (workspaceId: number, rateLimit: { perSecond: number; burst: number } | null) =>
        auditWrittenBy(t.store, t.fx.workspace.id, async () =>
          expect(
            await t.store.updateApiTokenRateLimit(workspaceId, record.id, rateLimit, auditContext({ at: T1 })),
          ).toEqual(workspaceId === t.fx.workspace.id ? { ...record, rateLimit } : null),
        );

      expect(await update(t.fx.otherWorkspace.id, { perSecond: 1, burst: 1 })).toEqual([]);
      const [set] = await update(t.fx.workspace.id, { perSecond: 5, burst: 10 });
      expect(set).toMatchObject({
        action: 'api_token.updated',
        at: T1,
        environment: 'Testing',
        teamId: null,
        requestId: 'req-1',
        changes: { rate_limit: { before: null, after: { per_second: 5, burst: 10 } } },
      });
      expect(await t.store.findApiTokenByHash(input.tokenHash)).toEqual({
        ...record,
        rateLimit: { perSecond: 5, burst: 10 },
      });
      // The same value again is no change: nothing written, nothing audited.
      expect(await update(t.fx.workspace.id, { perSecond: 5, burst: 10 })).toEqual([]);
      const [cleared] = await update(t.fx.workspace.id, null);
      expect(cleared?.changes).toEqual({ rate_limit: { before: { per_second: 5, burst: 10 }, after: null } });
      expect(await t.store.findApiTokenByHash(input.tokenHash)).toEqual(record);
    });

    it('does not update a revoked token', async () => {
      const record = await t.store.insertApiToken(newApiToken(t.fx.customer), auditContext());
      await t.store.revokeApiToken(t.fx.workspace.id, record.id, auditContext());
      expect(
        await t.store.updateApiTokenRateLimit(t.fx.workspace.id, record.id, { perSecond: 1, burst: 1 }, auditContext()),
      ).toBeNull();
    });

    it('insertApiTokensIfWorkspaceHasNone inserts all tokens into an empty workspace, then never again', async () => {
      const tokens = [newApiToken(t.fx.customer, { scope: 'admin' }), newApiToken(t.fx.testing, { scope: 'admin' })];
      const inserted = await t.store.insertApiTokensIfWorkspaceHasNone(t.fx.workspace.id, tokens, auditContext());
      expect(inserted?.map((token) => [token.environment, token.scope])).toEqual([
        ['Customer', 'admin'],
        ['Testing', 'admin'],
      ]);
      for (const token of tokens) expect(await t.store.findApiTokenByHash(token.tokenHash)).not.toBeNull();

      const again = [newApiToken(t.fx.customer)];
      expect(await t.store.insertApiTokensIfWorkspaceHasNone(t.fx.workspace.id, again, auditContext())).toBeNull();
      expect(await t.store.findApiTokenByHash(again[0]!.tokenHash)).toBeNull();
    });

    it('insertApiTokensIfWorkspaceHasNone counts revoked tokens too', async () => {
      const record = await t.store.insertApiToken(newApiToken(t.fx.customer), auditContext());
      await t.store.revokeApiToken(t.fx.workspace.id, record.id, auditContext());
      const tokens = [newApiToken(t.fx.customer)];
      expect(await t.store.insertApiTokensIfWorkspaceHasNone(t.fx.workspace.id, tokens, auditContext())).toBeNull();
    });

    it('insertApiTokensIfWorkspaceHasNone lets exactly one of concurrent first starts insert', async () => {
      const attempts = await Promise.all(
        Array.from({ length: 5 }, () =>
          t.store.insertApiTokensIfWorkspaceHasNone(t.fx.workspace.id, [newApiToken(t.fx.customer)], auditContext()),
        ),
      );
      expect(attempts.filter((result) => result !== null)).toHaveLength(1);
      expect(await t.store.listApiTokens(t.fx.workspace.id)).toHaveLength(1);
    });
  });
}
