import { describe, expect, it } from 'vitest';
import { auditContext, auditWrittenBy, createGroup, randomHex, T0, T1, T2 } from '../store-fixtures.js';
import type { ContractContext } from './context.js';
import { addEndpoint, claimAt, deliveriesOf, recordAttempt } from './webhook-fixtures.js';

export function describeWebhookEndpointContract(t: ContractContext): void {
  describe('webhook endpoints', () => {
    it('inserts an endpoint, audited without its secret, and lists and finds it in its tenant only', async () => {
      let endpoint = await addEndpoint(t.store, t.fx.testing, ['*']);
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        endpoint = await addEndpoint(t.store, t.fx.customer, ['user_group.created', 'api_token.revoked']);
      });
      expect(endpoint).toEqual({
        id: expect.any(Number),
        workspaceId: t.fx.workspace.id,
        environment: 'Customer',
        url: 'https://hooks.example.com/ugs',
        events: ['user_group.created', 'api_token.revoked'],
        description: 'contract',
        enabled: true,
        secretCiphertext: expect.stringMatching(/^[0-9a-f]{64}$/),
        previousSecretCiphertext: null,
        previousSecretExpiresAt: null,
        failingSince: null,
        createdAt: T0,
        updatedAt: T0,
      });
      expect(events).toMatchObject([{ action: 'webhook_endpoint.created', environment: 'Customer' }]);
      expect(JSON.stringify(events)).not.toContain(endpoint.secretCiphertext);
      const second = await addEndpoint(t.store, t.fx.customer, ['*'], 'https://second.example.com/');
      expect(await t.store.listWebhookEndpoints(t.fx.customer)).toEqual([endpoint, second]);
      expect(await t.store.listWebhookEndpoints(t.fx.otherCustomer)).toEqual([]);
      expect(await t.store.findWebhookEndpoint(t.fx.customer, endpoint.id)).toEqual(endpoint);
      expect(await t.store.findWebhookEndpoint(t.fx.testing, endpoint.id)).toBeNull();
      expect(await t.store.findWebhookEndpoint(t.fx.otherCustomer, endpoint.id)).toBeNull();
    });

    it('updates an endpoint, audited with the fields that changed; a patch that changes nothing is not audited', async () => {
      const endpoint = await addEndpoint(t.store, t.fx.customer, ['*']);
      const patch = { url: 'https://moved.example.com/', events: ['user_group.deleted' as const], enabled: false };
      let updated: unknown;
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        updated = await t.store.updateWebhookEndpoint(t.fx.customer, endpoint.id, patch, auditContext({ at: T1 }));
        const same = await t.store.updateWebhookEndpoint(
          t.fx.customer,
          endpoint.id,
          { description: 'contract' },
          auditContext(),
        );
        expect(same).toMatchObject(patch);
      });
      expect(updated).toEqual({ ...endpoint, ...patch, updatedAt: T1 });
      expect(events).toMatchObject([
        {
          action: 'webhook_endpoint.updated',
          at: T1,
          changes: {
            url: { before: endpoint.url, after: patch.url },
            events: { before: ['*'], after: patch.events },
            enabled: { before: true, after: false },
          },
        },
      ]);
      expect(Object.keys(events[0]!.changes!).sort()).toEqual(['enabled', 'events', 'url']);
      expect(await t.store.findWebhookEndpoint(t.fx.customer, endpoint.id)).toMatchObject(patch);
      const elsewhere = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        expect(
          await t.store.updateWebhookEndpoint(t.fx.testing, endpoint.id, { enabled: true }, auditContext()),
        ).toBeNull();
      });
      expect(elsewhere).toEqual([]);
    });

    it('rotates the secret, keeping the one it replaces until a time, audited without either secret', async () => {
      const endpoint = await addEndpoint(t.store, t.fx.customer, ['*']);
      const secret = randomHex();
      let rotated: unknown;
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        rotated = await t.store.rotateWebhookSecret(t.fx.customer, endpoint.id, secret, T2, auditContext({ at: T1 }));
        expect(
          await t.store.rotateWebhookSecret(t.fx.testing, endpoint.id, randomHex(), T2, auditContext()),
        ).toBeNull();
      });
      expect(rotated).toEqual({
        ...endpoint,
        secretCiphertext: secret,
        previousSecretCiphertext: endpoint.secretCiphertext,
        previousSecretExpiresAt: T2,
        updatedAt: T1,
      });
      expect(await t.store.findWebhookEndpoint(t.fx.customer, endpoint.id)).toEqual(rotated);
      expect(events).toMatchObject([
        {
          action: 'webhook_endpoint.secret_rotated',
          changes: { previous_secret_expires_at: { before: null, after: T2 } },
        },
      ]);
      expect(JSON.stringify(events)).not.toContain(secret);
      expect(JSON.stringify(events)).not.toContain(endpoint.secretCiphertext);
    });

    it('deletes an endpoint with its deliveries, audited once; a lease on one of them is lost', async () => {
      const endpoint = await addEndpoint(t.store, t.fx.customer, ['*']);
      await createGroup(t.store, t.fx.customer, 'leased');
      await createGroup(t.store, t.fx.customer, 'waiting');
      const [leased] = await claimAt(t.store, 'worker', T0, { limit: 1 });
      expect(leased).toBeDefined();
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        expect(await t.store.deleteWebhookEndpoint(t.fx.testing, endpoint.id, auditContext())).toBeNull();
        expect(await t.store.deleteWebhookEndpoint(t.fx.customer, endpoint.id, auditContext())).toEqual(endpoint);
        expect(await t.store.deleteWebhookEndpoint(t.fx.customer, endpoint.id, auditContext())).toBeNull();
      });
      expect(events).toMatchObject([{ action: 'webhook_endpoint.deleted', environment: 'Customer' }]);
      expect(await t.store.listWebhookEndpoints(t.fx.customer)).toEqual([]);
      expect(await deliveriesOf(t.store, endpoint)).toEqual([]);
      expect(await t.store.webhookBacklog()).toEqual({ pending: 0, oldestPendingCreatedAt: null });
      expect(await recordAttempt(t.store, leased!.deliveryId, 'worker', T1, 'delivered')).toBe(false);
      expect(await claimAt(t.store, 'worker', T2)).toEqual([]);
    });
  });
}
