import { describe, expect, it } from 'vitest';
import type { UserGroupRecord } from '../../../src/domain/user-groups/user-group.records.js';
import type { WebhookEndpointRecord } from '../../../src/domain/webhook-endpoints/webhook.records.js';
import { auditContext, auditWrittenBy, createGroup, T0, T1, T2 } from '../store-fixtures.js';
import type { ContractContext } from './context.js';
import { addEndpoint, claimAt, deliveriesOf, deliveryIds, plusMinutes, recordAttempt } from './webhook-fixtures.js';

export function describeWebhookDeliveryContract(t: ContractContext): void {
  describe('webhook deliveries', () => {
    /** An endpoint of Customer wanting every event, and `count` groups created after it: one delivery each, due at T0. */
    async function announced(count: number): Promise<{ endpoint: WebhookEndpointRecord; groups: UserGroupRecord[] }> {
      const endpoint = await addEndpoint(t.store, t.fx.customer, ['*']);
      const groups: UserGroupRecord[] = [];
      for (let i = 0; i < count; i++) groups.push(await createGroup(t.store, t.fx.customer, `g${i}`));
      expect(await deliveriesOf(t.store, endpoint)).toHaveLength(count);
      return { endpoint, groups };
    }

    /** Renames the group at T0, announcing user_group.updated; returns the group as renamed. */
    async function rename(group: UserGroupRecord, name: string): Promise<UserGroupRecord> {
      const update = { teamId: group.teamId, expectedVersion: group.version, patch: { name }, updatedAt: T0 };
      const renamed = await t.store.updateUserGroup({ tenant: t.fx.customer, ...update }, auditContext());
      expect(renamed).not.toBeNull();
      return renamed!;
    }

    it('leases a delivery to one claimant at a time, and lets another take it over once the lease expires', async () => {
      const { endpoint } = await announced(1);
      const [first, ...more] = await claimAt(t.store, 'worker-a', T0);
      expect(more).toEqual([]);
      expect(first).toMatchObject({ attempts: 0, createdAt: T0, endpoint });
      expect(await claimAt(t.store, 'worker-b', plusMinutes(T0, 0.5))).toEqual([]);
      // worker-a's lease ran until T0 + 1 min; worker-b takes the delivery over then.
      const [takenOver] = await claimAt(t.store, 'worker-b', plusMinutes(T0, 1));
      expect(takenOver?.deliveryId).toBe(first!.deliveryId);
      expect(await recordAttempt(t.store, first!.deliveryId, 'worker-a', plusMinutes(T0, 1), 'delivered')).toBe(false);
      expect(await deliveriesOf(t.store, endpoint)).toMatchObject([{ status: 'pending', attempts: 0 }]);
      expect(await recordAttempt(t.store, first!.deliveryId, 'worker-b', plusMinutes(T0, 1), 'delivered')).toBe(true);
      expect(await claimAt(t.store, 'worker-c', plusMinutes(T0, 10))).toEqual([]);
    });

    it('never hands one delivery to two of several claims made at once', async () => {
      const { endpoint } = await announced(6);
      const rounds = await Promise.all(['a', 'b', 'c'].map((owner) => claimAt(t.store, owner, T0, { limit: 2 })));
      const claimed = rounds.flatMap(deliveryIds);
      expect(claimed.length).toBeGreaterThan(0);
      expect(new Set(claimed).size).toBe(claimed.length);
      const rest = deliveryIds(await claimAt(t.store, 'd', T0));
      expect([...claimed, ...rest].sort((a, b) => a - b)).toEqual(
        (await deliveriesOf(t.store, endpoint)).map((delivery) => delivery.id).reverse(),
      );
    });

    it('claims due deliveries oldest first, up to the limit, passing over endpoints the claimant skips', async () => {
      const { endpoint } = await announced(3);
      const skipped = await addEndpoint(t.store, t.fx.testing, ['*']);
      await createGroup(t.store, t.fx.testing, 'elsewhere');
      expect(await claimAt(t.store, 'early', plusMinutes(T0, -1))).toEqual([]);
      const ids = (await deliveriesOf(t.store, endpoint)).map((delivery) => delivery.id).reverse();
      const claimed = await claimAt(t.store, 'worker', T0, { limit: 2, skipEndpointIds: [skipped.id] });
      expect(deliveryIds(claimed)).toEqual(ids.slice(0, 2));
      const next = await claimAt(t.store, 'worker', T0, { skipEndpointIds: [skipped.id] });
      expect(deliveryIds(next)).toEqual(ids.slice(2));
      expect((await claimAt(t.store, 'worker', T0)).map((delivery) => delivery.endpoint.id)).toEqual([skipped.id]);
    });

    it('records each outcome of an attempt on the delivery, and only for the lease holder', async () => {
      const { endpoint } = await announced(3);
      const [delivered, retried, failed] = deliveryIds(await claimAt(t.store, 'worker', T0));
      expect(await recordAttempt(t.store, delivered!, 'someone-else', T1, 'delivered')).toBe(false);
      expect(await recordAttempt(t.store, delivered!, 'worker', T1, 'delivered')).toBe(true);
      expect(
        await recordAttempt(t.store, retried!, 'worker', T1, 'retry', {
          nextAttemptAt: T2,
          responseStatus: null,
          error: 'timeout',
        }),
      ).toBe(true);
      expect(await recordAttempt(t.store, failed!, 'worker', T1, 'failed')).toBe(true);
      // A recorded attempt ends the lease: the same owner cannot record twice.
      expect(await recordAttempt(t.store, failed!, 'worker', T1, 'delivered')).toBe(false);
      const byId = new Map((await deliveriesOf(t.store, endpoint)).map((delivery) => [delivery.id, delivery]));
      const last = { attempts: 1, lastAttemptAt: T1 };
      expect(byId.get(delivered!)).toMatchObject({
        ...last,
        status: 'delivered',
        nextAttemptAt: null,
        completedAt: T1,
      });
      expect(byId.get(delivered!)).toMatchObject({ lastResponseStatus: 200, lastError: null });
      expect(byId.get(retried!)).toMatchObject({ ...last, status: 'pending', nextAttemptAt: T2, completedAt: null });
      expect(byId.get(retried!)).toMatchObject({ lastResponseStatus: null, lastError: 'timeout' });
      expect(byId.get(failed!)).toMatchObject({ ...last, status: 'failed', nextAttemptAt: null, completedAt: T1 });
      expect(byId.get(failed!)).toMatchObject({ lastResponseStatus: 500, lastError: 'HTTP 500' });
      expect(await t.store.webhookBacklog()).toEqual({ pending: 1, oldestPendingCreatedAt: T0 });
      // The retry is due at T2, with its attempt counted.
      expect(await claimAt(t.store, 'worker', plusMinutes(T2, -1))).toEqual([]);
      expect(await claimAt(t.store, 'worker', T2)).toMatchObject([{ deliveryId: retried, attempts: 1 }]);
    });

    it("delivers one group's events to an endpoint in order, each waiting for the one before to finish", async () => {
      const {
        endpoint,
        groups: [group, other],
      } = await announced(2);
      const second = await addEndpoint(t.store, t.fx.customer, ['user_group.updated']);
      await rename(await rename(group!, 'one'), 'two');
      const inLine = await deliveriesOf(t.store, endpoint);
      expect(inLine.slice(0, 2)).toMatchObject([
        { eventType: 'user_group.updated', nextAttemptAt: null },
        { eventType: 'user_group.updated', nextAttemptAt: null },
      ]);
      const [renamedTwice, renamedOnce, otherCreated, created] = inLine.map((delivery) => delivery.id);

      // The first of each endpoint and group: the other endpoint's first rename goes alongside.
      const firstRound = await claimAt(t.store, 'worker', T0);
      const [secondFirst] = await deliveriesOf(t.store, second, { limit: 2 }).then((list) => list.reverse());
      expect(deliveryIds(firstRound)).toEqual([created, otherCreated, secondFirst!.id]);
      expect(firstRound[1]?.event.subject).toMatchObject({ userGroup: { teamId: other!.teamId } });

      // Each endpoint keeps its own line: once the other endpoint has the first rename, its second goes.
      await recordAttempt(t.store, otherCreated!, 'worker', T0, 'delivered');
      await recordAttempt(t.store, secondFirst!.id, 'worker', T0, 'delivered');
      const secondNext = await claimAt(t.store, 'worker', T0);
      expect(secondNext).toMatchObject([
        { endpoint: { id: second.id }, event: { subject: { userGroup: { name: 'two' } } } },
      ]);
      await recordAttempt(t.store, secondNext[0]!.deliveryId, 'worker', T0, 'delivered');

      // A retry keeps the group's line waiting.
      await recordAttempt(t.store, created!, 'worker', T1, 'retry', { nextAttemptAt: T1 });
      expect(deliveryIds(await claimAt(t.store, 'worker', T1))).toEqual([created]);
      // Delivering it lets the next one go, due at the attempt's time; failing for good does as well.
      await recordAttempt(t.store, created!, 'worker', T1, 'delivered');
      const next = await claimAt(t.store, 'worker', T1);
      expect(next).toMatchObject([{ deliveryId: renamedOnce, event: { subject: { userGroup: { name: 'one' } } } }]);
      await recordAttempt(t.store, renamedOnce!, 'worker', T2, 'failed');
      expect(await claimAt(t.store, 'worker', T2)).toMatchObject([
        { deliveryId: renamedTwice, event: { subject: { userGroup: { name: 'two' } } } },
      ]);
    });

    it('disables an endpoint, audited, once every attempt has failed for the failure window, and a success resets the window', async () => {
      const { endpoint } = await announced(4);
      const [a, b, c, d] = deliveryIds(await claimAt(t.store, 'worker', T0));
      const dayBefore = (at: string) => plusMinutes(at, -24 * 60);
      const day = 24 * 60;
      await recordAttempt(t.store, a!, 'worker', T1, 'failed', { disableIfFailingSince: dayBefore(T1) });
      expect(await t.store.findWebhookEndpoint(t.fx.customer, endpoint.id)).toMatchObject({
        enabled: true,
        failingSince: T1,
      });
      // A success ends the streak: the next failure starts a new one.
      await recordAttempt(t.store, b!, 'worker', T1, 'delivered');
      expect(await t.store.findWebhookEndpoint(t.fx.customer, endpoint.id)).toMatchObject({ failingSince: null });
      await recordAttempt(t.store, c!, 'worker', T2, 'retry', { disableIfFailingSince: dayBefore(T2) });
      const dayLater = plusMinutes(T2, day);
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        await recordAttempt(t.store, d!, 'worker', dayLater, 'failed', { disableIfFailingSince: dayBefore(dayLater) });
      });
      expect(events).toMatchObject([
        {
          action: 'webhook_endpoint.disabled',
          environment: 'Customer',
          changes: { enabled: { before: true, after: false } },
        },
      ]);
      const disabled = await t.store.findWebhookEndpoint(t.fx.customer, endpoint.id);
      expect(disabled).toMatchObject({ enabled: false, failingSince: T2 });
      // Its pending retry is neither claimed nor counted as backlog while it is disabled.
      expect(await claimAt(t.store, 'worker', dayLater)).toEqual([]);
      expect(await t.store.webhookBacklog()).toEqual({ pending: 0, oldestPendingCreatedAt: null });
      // Enabling it clears the streak and lets its deliveries go again.
      await t.store.updateWebhookEndpoint(t.fx.customer, endpoint.id, { enabled: true }, auditContext());
      expect(await t.store.findWebhookEndpoint(t.fx.customer, endpoint.id)).toMatchObject({
        enabled: true,
        failingSince: null,
      });
      expect(deliveryIds(await claimAt(t.store, 'worker', dayLater))).toEqual([c]);
    });

    it('puts a finished delivery back in the queue by hand, audited, with a fresh attempt budget, ahead of its group', async () => {
      const {
        endpoint,
        groups: [group],
      } = await announced(1);
      const [delivery] = deliveryIds(await claimAt(t.store, 'worker', T0));
      await recordAttempt(t.store, delivery!, 'worker', T0, 'failed');
      // The group's next event, due at once: nothing of its group is unfinished.
      await rename(group!, 'later');
      const [later] = await deliveriesOf(t.store, endpoint);
      expect(later).toMatchObject({ status: 'pending', nextAttemptAt: T0 });
      let retried: unknown;
      const events = await auditWrittenBy(t.store, t.fx.workspace.id, async () => {
        retried = await t.store.retryWebhookDelivery(t.fx.customer, delivery!, auditContext({ at: T1 }));
      });
      expect(retried).toMatchObject({
        id: delivery,
        status: 'pending',
        attempts: 0,
        nextAttemptAt: T1,
        completedAt: null,
      });
      expect(await deliveriesOf(t.store, endpoint)).toEqual([later, retried]);
      expect(events).toMatchObject([
        {
          action: 'webhook_delivery.retried',
          environment: 'Customer',
          changes: { status: { before: 'failed', after: 'pending' }, delivery_id: { before: null, after: delivery } },
        },
      ]);
      // The retried delivery is the earliest unfinished one of its group again: the later one waits for it.
      expect(await claimAt(t.store, 'worker', T1)).toMatchObject([{ deliveryId: delivery, attempts: 0 }]);
      await recordAttempt(t.store, delivery!, 'worker', T1, 'delivered');
      expect(deliveryIds(await claimAt(t.store, 'worker', T1))).toEqual([later!.id]);
      // Another tenant's delivery, or none, is not found.
      expect(await t.store.retryWebhookDelivery(t.fx.testing, delivery!, auditContext())).toBeNull();
      expect(await t.store.retryWebhookDelivery(t.fx.customer, delivery! + 1000, auditContext())).toBeNull();
    });

    it('lists deliveries newest first, by endpoint and status, a page at a time, within the tenant', async () => {
      const { endpoint } = await announced(3);
      const second = await addEndpoint(t.store, t.fx.customer, ['user_group.created']);
      await createGroup(t.store, t.fx.customer, 'late');
      const [one] = deliveryIds(await claimAt(t.store, 'worker', T0, { limit: 1 }));
      await recordAttempt(t.store, one!, 'worker', T1, 'delivered');
      const all = await deliveriesOf(t.store, endpoint, { endpointId: undefined });
      expect(all.map((delivery) => delivery.endpointId)).toEqual([
        second.id,
        endpoint.id,
        endpoint.id,
        endpoint.id,
        endpoint.id,
      ]);
      expect(all.map((delivery) => delivery.id)).toEqual([...all.map((delivery) => delivery.id)].sort((x, y) => y - x));
      expect(await deliveriesOf(t.store, endpoint, { status: 'delivered' })).toMatchObject([{ id: one }]);
      expect(await deliveriesOf(t.store, endpoint, { status: 'pending' })).toHaveLength(3);
      const page = await deliveriesOf(t.store, endpoint, { endpointId: undefined, limit: 2, beforeId: all[1]!.id });
      expect(page).toEqual(all.slice(2, 4));
      expect(await deliveriesOf(t.store, endpoint, { environment: 'Testing', endpointId: undefined })).toEqual([]);
      expect(await deliveriesOf(t.store, endpoint, { workspaceId: t.fx.otherWorkspace.id })).toEqual([]);
    });

    it('purges finished deliveries completed before a time, a batch at a time, and keeps the rest', async () => {
      const { endpoint } = await announced(4);
      const [a, b, c] = deliveryIds(await claimAt(t.store, 'worker', T0, { limit: 3 }));
      await recordAttempt(t.store, a!, 'worker', T0, 'delivered');
      await recordAttempt(t.store, b!, 'worker', T0, 'failed');
      await recordAttempt(t.store, c!, 'worker', T2, 'delivered');
      expect(await t.store.purgeWebhookHistory(T1, 1)).toBe(1);
      expect(await t.store.purgeWebhookHistory(T1, 1)).toBe(1);
      expect(await t.store.purgeWebhookHistory(T1, 1)).toBe(0);
      const left = await deliveriesOf(t.store, endpoint);
      expect(left.map((delivery) => delivery.status)).toEqual(['pending', 'delivered']);
      expect(left[1]?.id).toBe(c);
      expect(await t.store.webhookBacklog()).toEqual({ pending: 1, oldestPendingCreatedAt: T0 });
    });
  });
}
