import { describe, expect, it } from 'vitest';
import type { UserGroupRecord } from '../../../src/domain/user-groups/user-group.records.js';
import { API_ACTOR, auditContext, auditWrittenBy, createGroup, randomHex, T1, T2 } from '../store-fixtures.js';
import type { ContractContext } from './context.js';

/** Now, in Unix seconds: group entries expire by the database's clock (the triggers'). */
const nowS = () => Math.floor(Date.now() / 1000);
const DAY_S = 86_400;

export function describeEmbedTokenRevocationContract(t: ContractContext): void {
  describe('embed token revocations', () => {
    const list = () => t.store.listEmbedTokenRevocations(t.fx.customer, nowS());
    const groupEntries = async (group: UserGroupRecord) =>
      (await list()).groups.filter((entry) => entry.teamId === group.teamId).map((entry) => entry.beforeGeneration);

    it('keeps one random key, the same on every read', async () => {
      const secret = await t.store.embedRevocationSecret();
      expect(secret).toMatch(/^[0-9a-f]{64}$/);
      expect(await t.store.embedRevocationSecret()).toBe(secret);
    });

    it('writes a group entry in the change’s own transaction wherever tokens are invalidated: rotation, import, sync, deletion', async () => {
      const rotated = await createGroup(t.store, t.fx.customer, 'rotated');
      await t.store.rotateUserGroupToken(
        {
          tenant: t.fx.customer,
          currentTokenHash: rotated.tokenHash,
          newTokenHash: randomHex(),
          newTokenCiphertext: randomHex(),
          updatedAt: T1,
        },
        auditContext(),
      );
      expect(await groupEntries(rotated)).toEqual([1]);

      // An import replacing the token (a batch write carrying one) raises the generation too.
      const imported = await createGroup(t.store, t.fx.customer, 'imported');
      await t.store.applyUserGroupWrites(
        t.fx.customer,
        [
          {
            kind: 'update',
            update: {
              tenant: t.fx.customer,
              teamId: imported.teamId,
              expectedVersion: imported.version,
              patch: { tokenHash: randomHex(), tokenCiphertext: randomHex() },
              updatedAt: T1,
            },
            changes: {},
          },
        ],
        { at: T1, actor: API_ACTOR, requestId: null },
        { policy: 'per_batch' },
      );
      expect(await groupEntries(imported)).toEqual([1]);

      // A change that keeps the token writes nothing.
      const renamed = await createGroup(t.store, t.fx.customer, 'renamed');
      await t.store.updateUserGroup(
        {
          tenant: t.fx.customer,
          teamId: renamed.teamId,
          expectedVersion: 1,
          patch: { providedId: 'renamed-2' },
          updatedAt: T1,
        },
        auditContext(),
      );
      expect(await groupEntries(renamed)).toEqual([]);

      // A sync's deletion (its prune) and a plain deletion: every token the group had.
      const pruned = await createGroup(t.store, t.fx.customer, 'pruned');
      await t.store.applyUserGroupWrites(
        t.fx.customer,
        [
          {
            kind: 'delete',
            tenant: t.fx.customer,
            teamId: pruned.teamId,
            providedId: pruned.providedId,
            expectedVersion: pruned.version,
            changes: {},
          },
        ],
        { at: T2, actor: API_ACTOR, requestId: null, syncId: 'sync-1' },
        { policy: 'all_or_nothing' },
      );
      expect(await groupEntries(pruned)).toEqual([1]);
      const deleted = await createGroup(t.store, t.fx.customer, 'deleted');
      await t.store.deleteUserGroup(t.fx.customer, deleted.teamId, 1, auditContext());
      expect(await groupEntries(deleted)).toEqual([1]);
      // Each lasts the longest token lifetime past the change, and a little more for clock skew.
      const entry = (await list()).groups.find((row) => row.teamId === deleted.teamId)!;
      expect(entry.expiresAt).toBeGreaterThanOrEqual(nowS() + DAY_S);
      expect(entry.expiresAt).toBeLessThanOrEqual(nowS() + DAY_S + 600);
    });

    it('revokes every current token of a group by raising its generation, audited; nothing outside the tenant', async () => {
      const group = await createGroup(t.store, t.fx.customer, 'g1');
      expect(await t.store.revokeUserGroupEmbedTokens(t.fx.testing, group.teamId, auditContext())).toBeNull();
      expect(await t.store.revokeUserGroupEmbedTokens(t.fx.otherCustomer, group.teamId, auditContext())).toBeNull();
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        const revoked = await t.store.revokeUserGroupEmbedTokens(t.fx.customer, group.teamId, auditContext());
        // The group itself is unchanged: same version, same token.
        expect(revoked).toMatchObject({ tokenGeneration: 1, version: 1, tokenHash: group.tokenHash });
      });
      expect(events.map((event) => [event.action, event.teamId, event.changes])).toEqual([
        ['embed_token.revoked', group.teamId, { embed_tokens_revoked: { before: null, after: 'all' } }],
      ]);
      expect(await groupEntries(group)).toEqual([1]);
      expect(
        (await t.store.listEmbedTokenRevocations(t.fx.testing, nowS())).groups.map((entry) => entry.teamId),
      ).not.toContain(group.teamId);
    });

    it('revokes one token once by its jti, until its exp, audited once; only in its tenant', async () => {
      const group = await createGroup(t.store, t.fx.customer, 'g1');
      const revocation = { tenant: t.fx.customer, teamId: group.teamId, jti: '0.abc', expiresAt: nowS() + 3600 };
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        expect(await t.store.revokeEmbedToken(revocation, auditContext())).toMatchObject({ teamId: group.teamId });
        expect(await t.store.revokeEmbedToken(revocation, auditContext())).toMatchObject({ teamId: group.teamId });
      });
      expect(events.map((event) => [event.action, event.changes])).toEqual([
        [
          'embed_token.revoked',
          { embed_tokens_revoked: { before: null, after: 'one' }, jti: { before: null, after: '0.abc' } },
        ],
      ]);
      // Online verify's read: the group, and whether this jti is revoked, in its tenant only.
      expect(await t.store.findEmbedTokenGroup(t.fx.customer, group.teamId, '0.abc')).toMatchObject({
        group: { teamId: group.teamId, providedId: 'g1', tokenGeneration: 0 },
        revoked: true,
      });
      expect(await t.store.findEmbedTokenGroup(t.fx.customer, group.teamId, '0.other')).toMatchObject({
        group: { teamId: group.teamId },
        revoked: false,
      });
      expect(await t.store.findEmbedTokenGroup(t.fx.testing, group.teamId, '0.abc')).toBeNull();
      expect(await t.store.findEmbedTokenGroup(t.fx.otherCustomer, group.teamId, '0.abc')).toBeNull();
      expect((await list()).tokens).toEqual([{ jti: '0.abc', expiresAt: revocation.expiresAt }]);
      // A group of another tenant, or none: nothing written.
      expect(
        await t.store.revokeEmbedToken({ ...revocation, tenant: t.fx.testing, jti: '0.x' }, auditContext()),
      ).toBeNull();
      expect((await t.store.listEmbedTokenRevocations(t.fx.testing, nowS())).tokens).toEqual([]);
    });

    it('changes its version with every entry, reads only entries in force, and prunes the rest', async () => {
      const now = nowS();
      const empty = await t.store.embedTokenRevocationsVersion(t.fx.customer, now);
      const group = await createGroup(t.store, t.fx.customer, 'g1');
      await t.store.revokeEmbedToken(
        { tenant: t.fx.customer, teamId: group.teamId, jti: '0.short', expiresAt: now + 60 },
        auditContext(),
      );
      const one = await t.store.embedTokenRevocationsVersion(t.fx.customer, now);
      expect(one).not.toBe(empty);
      await t.store.revokeUserGroupEmbedTokens(t.fx.customer, group.teamId, auditContext());
      const two = await t.store.embedTokenRevocationsVersion(t.fx.customer, now);
      expect(two).not.toBe(one);
      expect(await t.store.embedTokenRevocationsVersion(t.fx.customer, now)).toBe(two);
      const listed = await t.store.listEmbedTokenRevocations(t.fx.customer, now);
      expect(listed.generation).toBeGreaterThan(0);
      expect([listed.groups.length, listed.tokens.length]).toEqual([1, 1]);
      // Past the token's exp only the group entry is in force; past a day and its margin, nothing.
      expect((await t.store.listEmbedTokenRevocations(t.fx.customer, now + 61)).tokens).toEqual([]);
      expect(await t.store.embedTokenRevocationsVersion(t.fx.customer, now + 61)).not.toBe(two);
      expect(await t.store.pruneEmbedTokenRevocations(now + 61)).toBe(1);
      expect((await t.store.listEmbedTokenRevocations(t.fx.customer, now)).groups).toHaveLength(1);
      expect(await t.store.pruneEmbedTokenRevocations(now + 2 * DAY_S)).toBe(1);
      expect(await t.store.listEmbedTokenRevocations(t.fx.customer, now)).toMatchObject({ groups: [], tokens: [] });
    });
  });
}
