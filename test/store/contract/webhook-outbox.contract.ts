import { describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../../../src/wire/contract.constants.js';
import type { NewSigningKey } from '../../../src/domain/signing-keys/signing-key.records.js';
import type { WebhookEventType } from '../../../src/domain/webhook-endpoints/webhook.records.js';
import {
  auditContext,
  auditWrittenBy,
  createGroup,
  expectAppError,
  newApiToken,
  newGroup,
  randomHex,
  SAMPLE_CHANGES,
  T0,
  T1,
} from '../store-fixtures.js';
import type { ContractContext } from './context.js';
import { addEndpoint, claimAt, deliveriesOf } from './webhook-fixtures.js';

/**
 * The change that announces an event, prepared before any endpoint exists; it resolves to what the
 * event's subject must hold (a pattern of the WebhookSubject).
 */
type Announcement = (t: ContractContext) => Promise<() => Promise<Record<string, unknown>>>;

const CHANGED = auditContext({ changes: SAMPLE_CHANGES });

const signingKey = (workspaceId: number, kid: string): NewSigningKey => ({
  workspaceId,
  environment: 'Customer',
  kid,
  publicJwk: { kty: 'EC', crv: 'P-256', x: kid, y: kid },
  privateKeyCiphertext: randomHex(),
  createdAt: T1,
});

const ANNOUNCEMENTS: Record<WebhookEventType, Announcement> = {
  'user_group.created': async (t) => async () => {
    const { group } = await t.store.insertUserGroupIfAbsent(newGroup(t.fx.customer, 'g1'), CHANGED);
    return { kind: 'user_group', userGroup: { teamId: group.teamId, providedId: 'g1', version: 1 } };
  },
  'user_group.updated': async (t) => {
    const group = await createGroup(t.store, t.fx.customer, 'g1');
    return async () => {
      const update = { teamId: group.teamId, expectedVersion: 1, patch: { name: 'Renamed' }, updatedAt: T1 };
      expect(await t.store.updateUserGroup({ tenant: t.fx.customer, ...update }, CHANGED)).not.toBeNull();
      return { kind: 'user_group', userGroup: { teamId: group.teamId, name: 'Renamed', version: 2 } };
    };
  },
  'user_group.token_rotated': async (t) => {
    const group = await createGroup(t.store, t.fx.customer, 'g1');
    return async () => {
      const rotation = {
        currentTokenHash: group.tokenHash,
        newTokenHash: randomHex(),
        newTokenCiphertext: randomHex(),
      };
      expect(
        await t.store.rotateUserGroupToken({ tenant: t.fx.customer, ...rotation, updatedAt: T1 }, CHANGED),
      ).not.toBeNull();
      return { kind: 'user_group', userGroup: { teamId: group.teamId, version: 2 } };
    };
  },
  'user_group.deleted': async (t) => {
    const group = await createGroup(t.store, t.fx.customer, 'g1');
    return async () => {
      expect(await t.store.deleteUserGroup(t.fx.customer, group.teamId, 1, CHANGED)).toEqual({ status: 'deleted' });
      return { kind: 'user_group', userGroup: { teamId: group.teamId, providedId: 'g1' } };
    };
  },
  'embed_token.revoked': async (t) => {
    const group = await createGroup(t.store, t.fx.customer, 'g1');
    return async () => {
      expect(await t.store.revokeUserGroupEmbedTokens(t.fx.customer, group.teamId, CHANGED)).not.toBeNull();
      return { kind: 'user_group', userGroup: { teamId: group.teamId, providedId: 'g1', version: 1 } };
    };
  },
  'api_token.created': async (t) => async () => {
    const token = await t.store.insertApiToken(newApiToken(t.fx.customer), CHANGED);
    return { kind: 'api_token', apiToken: token };
  },
  'api_token.revoked': async (t) => {
    const token = await t.store.insertApiToken(newApiToken(t.fx.customer), auditContext());
    return async () => {
      const revoked = await t.store.revokeApiToken(t.fx.workspace.id, token.id, CHANGED);
      expect(revoked).not.toBeNull();
      return { kind: 'api_token', apiToken: revoked! };
    };
  },
  'signing_key.rotated': async (t) => {
    await t.store.insertFirstSigningKey(signingKey(t.fx.workspace.id, 'kid-1'), auditContext());
    return async () => {
      await t.store.rotateSigningKey(signingKey(t.fx.workspace.id, 'kid-2'), CHANGED, {
        publishedSince: T0,
        force: false,
      });
      return { kind: 'signing_key', signingKey: { kid: 'kid-2', retiredAt: null }, retiredKid: 'kid-1' };
    };
  },
};

/** Secrets that no event's subject may carry. */
const SECRET_FIELDS = ['tokenHash', 'tokenCiphertext', 'privateKeyCiphertext'];

export function describeWebhookOutboxContract(t: ContractContext): void {
  describe('webhook outbox', () => {
    it('names an announcing change for every event kind', () => {
      expect(Object.keys(ANNOUNCEMENTS).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    });

    for (const kind of WEBHOOK_EVENT_TYPES) {
      it(`writes ${kind} with the change, one delivery per enabled endpoint of the tenant that wants it`, async () => {
        const act = await ANNOUNCEMENTS[kind](t);
        const otherKind = WEBHOOK_EVENT_TYPES[(WEBHOOK_EVENT_TYPES.indexOf(kind) + 1) % WEBHOOK_EVENT_TYPES.length]!;
        const wants = await addEndpoint(t.store, t.fx.customer, [kind]);
        const wantsEvery = await addEndpoint(t.store, t.fx.customer, [otherKind, '*']);
        const wantsOther = await addEndpoint(t.store, t.fx.customer, [otherKind]);
        const disabled = await addEndpoint(t.store, t.fx.customer, [kind]);
        await t.store.updateWebhookEndpoint(t.fx.customer, disabled.id, { enabled: false }, auditContext());
        const otherEnvironment = await addEndpoint(t.store, t.fx.testing, [kind]);
        const otherWorkspace = await addEndpoint(t.store, t.fx.otherCustomer, [kind]);

        const subject = await act();

        const receivers = [wants, wantsEvery];
        for (const endpoint of [wants, wantsEvery, wantsOther, disabled, otherEnvironment, otherWorkspace]) {
          const expected = receivers.includes(endpoint)
            ? [{ endpointId: endpoint.id, eventType: kind, status: 'pending', attempts: 0, nextAttemptAt: T0 }]
            : [];
          expect(await deliveriesOf(t.store, endpoint)).toMatchObject(expected);
        }
        expect(await t.store.webhookBacklog()).toEqual({ pending: receivers.length, oldestPendingCreatedAt: T0 });

        const [audited] = await t.store.listAuditEvents({ workspaceId: t.fx.workspace.id, action: kind, limit: 2 });
        const claimed = await claimAt(t.store, 'worker', T0);
        expect(claimed.map((delivery) => delivery.endpoint.id)).toEqual(receivers.map((e) => e.id));
        // One event, written once, however many endpoints receive it.
        expect(new Set(claimed.map((delivery) => delivery.event.id)).size).toBe(1);
        for (const { event, workspaceName, attempts } of claimed) {
          expect({ workspaceName, attempts }).toEqual({ workspaceName: 'acme', attempts: 0 });
          expect(event).toMatchObject({
            id: expect.stringMatching(/^evt_[0-9a-f]{24}$/),
            type: kind,
            workspaceId: t.fx.workspace.id,
            environment: 'Customer',
            subject,
            changes: audited!.changes,
            createdAt: audited!.at,
          });
          const described = JSON.stringify(event.subject);
          for (const secret of SECRET_FIELDS) expect(described).not.toContain(`"${secret}"`);
        }
      });
    }

    // PostgreSQL writes a create, a rotation and a deletion as one statement while no enabled endpoint of
    // the tenant wants the event, and as a transaction otherwise (src/store/postgres/user-groups/statement-or-transaction.ts):
    // the test above takes the transaction, this one the statement, with endpoints that do not want it.
    for (const kind of WEBHOOK_EVENT_TYPES) {
      it(`writes ${kind} with its audit event and no webhook event while no enabled endpoint of the tenant wants it`, async () => {
        const act = await ANNOUNCEMENTS[kind](t);
        const otherKind = WEBHOOK_EVENT_TYPES[(WEBHOOK_EVENT_TYPES.indexOf(kind) + 1) % WEBHOOK_EVENT_TYPES.length]!;
        const wantsOther = await addEndpoint(t.store, t.fx.customer, [otherKind]);
        const disabled = await addEndpoint(t.store, t.fx.customer, [kind, '*']);
        await t.store.updateWebhookEndpoint(t.fx.customer, disabled.id, { enabled: false }, auditContext());
        const otherEnvironment = await addEndpoint(t.store, t.fx.testing, [kind]);
        const otherWorkspace = await addEndpoint(t.store, t.fx.otherCustomer, ['*']);

        await act();

        for (const endpoint of [wantsOther, disabled, otherEnvironment, otherWorkspace])
          expect(await deliveriesOf(t.store, endpoint)).toEqual([]);
        expect(await claimAt(t.store, 'worker', T0)).toEqual([]);
        const audited = await t.store.listAuditEvents({ workspaceId: t.fx.workspace.id, action: kind, limit: 2 });
        expect(audited).toMatchObject([{ action: kind, environment: 'Customer' }]);
      });
    }

    it('writes no event, no delivery and no audit event for a change that writes nothing', async () => {
      const everything = await addEndpoint(t.store, t.fx.customer, ['*']);
      const parent = await createGroup(t.store, t.fx.customer, 'parent');
      const child = await createGroup(t.store, t.fx.customer, 'child', { parentProvidedId: 'parent' });
      const written = await deliveriesOf(t.store, everything);
      expect(written).toHaveLength(2);
      const { customer } = t.fx;
      const stale = {
        tenant: customer,
        teamId: parent.teamId,
        expectedVersion: 7,
        patch: { name: 'x' },
        updatedAt: T1,
      };
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        expect((await t.store.insertUserGroupIfAbsent(newGroup(customer, 'parent'), CHANGED)).created).toBe(false);
        expect(await t.store.updateUserGroup(stale, CHANGED)).toBeNull();
        const rotation = { currentTokenHash: randomHex(), newTokenHash: randomHex(), newTokenCiphertext: randomHex() };
        expect(
          await t.store.rotateUserGroupToken({ tenant: customer, ...rotation, updatedAt: T1 }, CHANGED),
        ).toBeNull();
        expect(await t.store.deleteUserGroup(customer, child.teamId, 9, CHANGED)).toEqual({ status: 'moved' });
        expect(await t.store.deleteUserGroup(customer, parent.teamId, 1, CHANGED)).toEqual({
          status: 'has_children',
          children: 1,
        });
        expect(await t.store.revokeApiToken(t.fx.workspace.id, 999_999, CHANGED)).toBeNull();
        const cycle = { ...stale, expectedVersion: 1, patch: { parentProvidedId: 'child' } };
        await expectAppError(t.store.updateUserGroup(cycle, CHANGED), 'hierarchy_cycle');
        // A batch is all or nothing: its create goes with the update that finds its row moved on.
        const batch = t.store.applyUserGroupWrites(
          customer,
          [
            { kind: 'create', group: newGroup(customer, 'batched'), changes: SAMPLE_CHANGES },
            { kind: 'update', update: stale, changes: SAMPLE_CHANGES },
          ],
          auditContext(),
          { policy: 'per_batch' },
        );
        await expectAppError(batch, 'concurrent_change');
      });
      expect(events).toEqual([]);
      expect(await deliveriesOf(t.store, everything)).toEqual(written);
      expect(await t.store.findUserGroupByProvidedId(customer, 'batched')).toBeNull();
    });

    it('writes one event per write of a batch, each with the group as the batch left it', async () => {
      const existing = await createGroup(t.store, t.fx.customer, 'existing');
      const endpoint = await addEndpoint(t.store, t.fx.customer, ['user_group.created', 'user_group.updated']);
      const update = {
        tenant: t.fx.customer,
        teamId: existing.teamId,
        expectedVersion: 1,
        patch: { name: 'Batched' },
        updatedAt: T1,
      };
      await t.store.applyUserGroupWrites(
        t.fx.customer,
        [
          { kind: 'create', group: newGroup(t.fx.customer, 'new-1'), changes: SAMPLE_CHANGES },
          { kind: 'update', update, changes: SAMPLE_CHANGES },
          { kind: 'create', group: newGroup(t.fx.customer, 'new-2'), changes: SAMPLE_CHANGES },
        ],
        auditContext(),
        { policy: 'per_batch' },
      );
      const claimed = await claimAt(t.store, 'worker', T0);
      expect(claimed.map(({ event }) => [event.type, event.subject])).toMatchObject([
        ['user_group.created', { kind: 'user_group', userGroup: { providedId: 'new-1', version: 1 } }],
        ['user_group.updated', { kind: 'user_group', userGroup: { providedId: 'existing', name: 'Batched' } }],
        ['user_group.created', { kind: 'user_group', userGroup: { providedId: 'new-2', version: 1 } }],
      ]);
      expect(claimed.every((delivery) => delivery.endpoint.id === endpoint.id)).toBe(true);
    });
  });
}
