import { describe, expect, it } from 'vitest';
import type { ApiTokenRecord } from '../../../src/domain/api-tokens/api-token.records.js';
import { auditContext, auditWrittenBy, newApiToken, randomHex, T0, T1, T2 } from '../store-fixtures.js';
import type { ContractContext } from './context.js';

export function describeConsoleSessionContract(t: ContractContext): void {
  describe('console sessions', () => {
    async function adminToken(): Promise<ApiTokenRecord> {
      return t.store.insertApiToken(newApiToken(t.fx.testing, { scope: 'admin' }), auditContext());
    }
    const newSession = (apiToken: ApiTokenRecord, idHash = randomHex(), expiresAt = T1) => ({
      idHash,
      apiToken,
      createdAt: T0,
      expiresAt,
    });

    it("inserts a session, audited in the token's tenant, and finds it by hash with its live API token", async () => {
      const token = await adminToken();
      const input = newSession(token);
      let id = 0;
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        id = (await t.store.insertConsoleSession(input, auditContext({ at: T0 }))).id;
      });
      expect(events).toMatchObject([
        {
          action: 'console_session.created',
          environment: 'Testing',
          changes: { session_id: { before: null, after: id } },
        },
      ]);
      const found = await t.store.findConsoleSession(input.idHash);
      expect(found).toEqual({
        session: { id, apiTokenId: token.id, createdAt: T0, lastSeenAt: T0, expiresAt: T1 },
        apiToken: token,
      });
      expect(await t.store.findConsoleSession(randomHex())).toBeNull();
    });

    it('records a use, and finds nothing once the API token is revoked', async () => {
      const token = await adminToken();
      const input = newSession(token);
      const { id } = await t.store.insertConsoleSession(input, auditContext());
      await t.store.touchConsoleSession(id, T1, T2);
      expect((await t.store.findConsoleSession(input.idHash))?.session).toMatchObject({
        lastSeenAt: T1,
        expiresAt: T2,
      });
      await t.store.revokeApiToken(t.fx.workspace.id, token.id, auditContext());
      expect(await t.store.findConsoleSession(input.idHash)).toBeNull();
    });

    it('deletes a session once, audited; the second deletion finds nothing and writes nothing', async () => {
      const input = newSession(await adminToken());
      const { id } = await t.store.insertConsoleSession(input, auditContext());
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        expect(await t.store.deleteConsoleSession(id, auditContext())).toBe(true);
        expect(await t.store.deleteConsoleSession(id, auditContext())).toBe(false);
      });
      expect(events).toMatchObject([
        {
          action: 'console_session.ended',
          environment: 'Testing',
          changes: { session_id: { before: id, after: null } },
        },
      ]);
      expect(await t.store.findConsoleSession(input.idHash)).toBeNull();
    });

    it('purges sessions expired by a time, at most a batch at a time, and keeps the others', async () => {
      const token = await adminToken();
      const expired = [
        newSession(token, randomHex(), T0),
        newSession(token, randomHex(), T0),
        newSession(token, randomHex(), T1),
      ];
      const live = newSession(token, randomHex(), T2);
      for (const session of [...expired, live]) await t.store.insertConsoleSession(session, auditContext());
      expect(await t.store.purgeConsoleSessions(T1, 2)).toBe(2);
      expect(await t.store.purgeConsoleSessions(T1, 2)).toBe(1);
      expect(await t.store.purgeConsoleSessions(T1, 2)).toBe(0);
      for (const session of expired) expect(await t.store.findConsoleSession(session.idHash)).toBeNull();
      expect(await t.store.findConsoleSession(live.idHash)).not.toBeNull();
    });
  });
}
