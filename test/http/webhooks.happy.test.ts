// Webhooks (docs/api.md#webhooks) end to end on the engine under test: endpoints through the admin API, changes
// through the API, deliveries to real receivers on loopback, signatures checked with the Standard
// Webhooks reference library (`standardwebhooks`), an implementation independent of the service's.
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { injectClient, type Client } from '../support/http-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { FAST_WEBHOOKS, openWebhookApp } from '../support/webhook-app.js';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.js';
import { expectSuccess } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { apiToken } from '../support/callers.js';
import { userGroupApi } from '../support/user-group-api.js';

const SECRET_SHAPE = /^whsec_[A-Za-z0-9+/]{43}=$/;

function verify(secret: string, received: ReceivedWebhook): unknown {
  return new Webhook(secret).verify(received.body, received.headers as Record<string, string>);
}

describe('webhooks: endpoints, payloads and signatures', () => {
  let t: TestApp;
  let client: Client;
  let receiver: WebhookReceiver;
  const admin = () => apiToken(t);

  beforeAll(async () => {
    ({ t, client, receiver } = await openWebhookApp());
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const createEndpoint = async (body: Record<string, unknown>, token = admin()) =>
    expectSuccess(await client({ method: 'POST', path: '/api/admin/webhook_endpoints', token, body })).webhook_endpoint;

  const eventsOfType = (type: string) => receiver.received.filter((entry) => entry.json.type === type);

  it('creates an endpoint, shows its secret once, and lists it without', async () => {
    const endpoint = await createEndpoint({ url: receiver.url, events: ['user_group.created'], description: 'CRM' });
    expect(endpoint).toMatchObject({
      url: receiver.url,
      events: ['user_group.created'],
      environment: 'Customer',
      description: 'CRM',
      enabled: true,
    });
    expect(endpoint.secret).toMatch(SECRET_SHAPE);
    const listed = expectSuccess(
      await client({ method: 'GET', path: '/api/admin/webhook_endpoints', token: admin() }),
    ).webhook_endpoints;
    const found = listed.find((entry: { id: number }) => entry.id === endpoint.id);
    expect(found).toEqual({ ...endpoint, secret: undefined, created_at: endpoint.created_at });
    expect(JSON.stringify(listed)).not.toContain('whsec_');
    expectSuccess(
      await client({ method: 'DELETE', path: `/api/admin/webhook_endpoints/${endpoint.id}`, token: admin() }),
    );
  });

  it('announces each kind of change, signed, with the object and without any token', async () => {
    const endpoint = await createEndpoint({ url: receiver.url, events: ['*'] });
    const api = userGroupApi(client, apiToken(t, { scope: 'write' }));
    const id = uniqueId('hooked');
    const created = expectSuccess(
      await api.getOrCreate({ user_group_id: id, name: 'Before', properties: { plan: 'pro' } }),
    ).user_group;
    expectSuccess(await api.update({ user_group_id: id, name: 'After' }));
    const rotated = expectSuccess(await api.rotate(created.token)).user_group;
    expectSuccess(await api.remove({ user_group_id: id }));
    const issued = expectSuccess(
      await client({
        method: 'POST',
        path: '/api/admin/api_tokens',
        token: admin(),
        body: { name: 'hooked', scope: 'read' },
      }),
    ).api_token;
    expectSuccess(await client({ method: 'DELETE', path: `/api/admin/api_tokens/${issued.id}`, token: admin() }));
    // The first rotation creates the workspace's first key (signing_key.created, not announced); the second rotates it.
    expectSuccess(await client({ method: 'POST', path: '/api/admin/signing_keys/rotate', token: admin() }));
    expectSuccess(await client({ method: 'POST', path: '/api/admin/signing_keys/rotate', token: admin() }));

    const types = [
      'user_group.created',
      'user_group.updated',
      'user_group.token_rotated',
      'user_group.deleted',
      'api_token.created',
      'api_token.revoked',
      'signing_key.rotated',
    ];
    await receiver.waitFor(() => types.every((type) => eventsOfType(type).length > 0));
    for (const type of types) {
      const [received] = eventsOfType(type);
      expect(verify(endpoint.secret, received!)).toEqual(received!.json);
      expect(received!.headers['webhook-id']).toBe(received!.json.id);
      expect(received!.json).toMatchObject({
        type,
        workspace: 'default',
        id: expect.stringMatching(/^evt_[0-9a-f]{24}$/),
      });
      // No secret of any kind travels: group tokens, API tokens, webhook secrets.
      expect(received!.body).not.toMatch(/ugt_|ugs_live_|ugs_test_|whsec_|"token"/);
    }
    const group = (type: string) =>
      eventsOfType(type).find((entry) => entry.json.data.user_group.provided_id === id)!.json;
    expect(group('user_group.created')).toMatchObject({
      environment: 'Customer',
      data: {
        user_group: {
          team_id: created.team_id,
          name: 'Before',
          provided_id: id,
          properties: { plan: 'pro' },
          computed_properties: { plan: 'pro' },
        },
      },
    });
    expect(group('user_group.created').data).not.toHaveProperty('changes');
    expect(group('user_group.updated').data).toMatchObject({
      user_group: { name: 'After' },
      changes: { name: { before: 'Before', after: 'After' } },
    });
    expect(group('user_group.token_rotated').data.user_group).toMatchObject({
      team_id: created.team_id,
      updated_at: rotated.updated_at,
    });
    expect(group('user_group.deleted').data.user_group).toMatchObject({ team_id: created.team_id, name: 'After' });
    expect(eventsOfType('api_token.created')[0]!.json.data.api_token).toMatchObject({
      id: issued.id,
      name: 'hooked',
      scope: 'read',
    });
    expect(eventsOfType('signing_key.rotated')[0]!.json).toMatchObject({
      // Each environment has its own signing keys: a rotation is its environment's event.
      environment: 'Customer',
      data: { signing_key: { kid: expect.any(String) }, changes: { kid: {} } },
    });
    expectSuccess(
      await client({ method: 'DELETE', path: `/api/admin/webhook_endpoints/${endpoint.id}`, token: admin() }),
    );
  });

  it('sends an endpoint only the types it asked for, of its own environment', async () => {
    const wanted = await startWebhookReceiver();
    try {
      await createEndpoint({ url: wanted.url, events: ['user_group.deleted'], environment: 'Testing' });
      const testing = userGroupApi(client, apiToken(t, { environment: 'Testing', scope: 'write' }));
      const customer = userGroupApi(client, apiToken(t, { scope: 'write' }));
      const id = uniqueId('filtered');
      expectSuccess(await customer.getOrCreate({ user_group_id: id }));
      expectSuccess(await customer.remove({ user_group_id: id }));
      expectSuccess(await testing.getOrCreate({ user_group_id: id }));
      expectSuccess(await testing.remove({ user_group_id: id }));
      await wanted.waitFor((received) => received.length >= 1);
      // Everything else was written before the Testing delete: had it been sent, it would be here by now.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(wanted.received.map((entry) => [entry.json.type, entry.json.environment])).toEqual([
        ['user_group.deleted', 'Testing'],
      ]);
    } finally {
      await wanted.close();
    }
  });

  it("keeps each group's events in order under concurrent changes of many groups", async () => {
    const ordered = await startWebhookReceiver(() => ({ delayMs: Math.floor(Math.random() * 5) }));
    try {
      await createEndpoint({ url: ordered.url, events: ['user_group.created', 'user_group.updated'] });
      const api = userGroupApi(client, apiToken(t, { scope: 'write' }));
      const GROUPS = 12;
      const UPDATES = 8;
      const ids = Array.from({ length: GROUPS }, () => uniqueId('ordered'));
      await Promise.all(
        ids.map(async (id) => {
          expectSuccess(await api.getOrCreate({ user_group_id: id, name: `${id}:0` }));
          for (let n = 1; n <= UPDATES; n += 1)
            expectSuccess(await api.update({ user_group_id: id, name: `${id}:${n}` }));
        }),
      );
      // Delivery is at least once: an attempt that outlives its time limit on a loaded machine is sent
      // again under the same webhook-id, so events are counted, and ordered, by their first arrival.
      const firstArrivals = () => [
        ...new Map(ordered.received.map((entry) => [String(entry.headers['webhook-id']), entry])).values(),
      ];
      await ordered.waitFor(() => firstArrivals().length >= GROUPS * (UPDATES + 1));
      const events = firstArrivals();
      expect(events).toHaveLength(GROUPS * (UPDATES + 1));
      for (const id of ids) {
        const names = events
          .filter((entry) => entry.json.data.user_group.provided_id === id)
          .map((entry) => entry.json.data.user_group.name);
        expect(names).toEqual(Array.from({ length: UPDATES + 1 }, (_, n) => `${id}:${n}`));
      }
    } finally {
      await ordered.close();
    }
  });

  it('signs with both secrets while a rotated one overlaps, and each verifies alone', async () => {
    const overlap = await startWebhookReceiver();
    try {
      const endpoint = await createEndpoint({ url: overlap.url, events: ['user_group.created'] });
      const rotated = expectSuccess(
        await client({
          method: 'POST',
          path: `/api/admin/webhook_endpoints/${endpoint.id}/rotate_secret`,
          token: admin(),
        }),
      ).webhook_endpoint;
      expect(rotated.secret).toMatch(SECRET_SHAPE);
      expect(rotated.secret).not.toBe(endpoint.secret);
      expectSuccess(await userGroupApi(client, admin()).getOrCreate({ user_group_id: uniqueId('overlap') }));
      await overlap.waitFor((received) => received.length === 1);
      const [received] = overlap.received;
      expect(String(received!.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(verify(rotated.secret, received!)).toEqual(received!.json);
      expect(verify(endpoint.secret, received!)).toEqual(received!.json);
      expect(() => verify(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, received!)).toThrow();
    } finally {
      await overlap.close();
    }
  });

  it('shows deliveries and counts them in /metrics', async () => {
    const listed = expectSuccess(
      await client({ method: 'GET', path: '/api/admin/webhook_deliveries?status=delivered&limit=5', token: admin() }),
    );
    expect(listed.webhook_deliveries.length).toBe(5);
    expect(listed.webhook_deliveries[0]).toMatchObject({
      status: 'delivered',
      attempts: 1,
      last_response_status: 200,
      last_error: null,
      next_attempt_at: null,
    });
    expect(listed.next_cursor).toEqual(expect.any(String));
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/ugs_webhook_attempts_total\{result="delivered"\} [1-9]/);
    expect(metrics.body).toMatch(/ugs_webhook_backlog \d+/);
    expect(metrics.body).toMatch(/ugs_webhook_oldest_pending_age_seconds \d/);
  });
});

describe('webhooks: retries, disabling and manual retry', () => {
  let t: TestApp;
  let client: Client;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    // A failure window longer than the retries test's schedule (about 2.5 s), which must not disable its endpoint.
    t = await createTestApp({ webhooks: { allowPrivate: true, worker: { ...FAST_WEBHOOKS, failureWindowMs: 5000 } } });
    client = injectClient(t.app);
  });
  afterEach(async () => {
    await receiver?.close();
  });
  afterAll(async () => {
    await t?.close();
  });

  const deliveriesOf = async (endpointId: number) =>
    expectSuccess(
      await client({
        method: 'GET',
        path: `/api/admin/webhook_deliveries?endpoint_id=${endpointId}`,
        token: apiToken(t),
      }),
    ).webhook_deliveries;

  const hooked = async (events: string[] = ['user_group.created']) =>
    expectSuccess(
      await client({
        method: 'POST',
        path: '/api/admin/webhook_endpoints',
        token: apiToken(t),
        body: { url: receiver.url, events },
      }),
    ).webhook_endpoint;

  it('retries after 500s and timeouts with growing delays, then delivers once the receiver answers 2xx', async () => {
    // First a 500, then no answer within the timeout, then a 503, then success.
    receiver = await startWebhookReceiver(
      (_request, received) =>
        [{ status: 500 }, { delayMs: 1500 }, { status: 503 }][received.length - 1] ?? { status: 204 },
    );
    const endpoint = await hooked();
    expectSuccess(await userGroupApi(client, apiToken(t)).getOrCreate({ user_group_id: uniqueId('retried') }));
    await receiver.waitFor((received) => received.length === 4);
    const ids = new Set(receiver.received.map((entry) => entry.headers['webhook-id']));
    expect(ids.size).toBe(1);
    const gaps = receiver.received.slice(1).map((entry, index) => entry.at - receiver.received[index]!.at);
    // Each wait is the schedule's (100, 300, 900 ms, plus up to a quarter) after the attempt ended;
    // the timeout adds its second to the second gap.
    expect(gaps[0]).toBeGreaterThanOrEqual(100);
    expect(gaps[1]).toBeGreaterThanOrEqual(1000 + 300);
    expect(gaps[2]).toBeGreaterThanOrEqual(900);
    expect(gaps[2]!).toBeGreaterThan(gaps[0]!);
    await expect
      .poll(async () => (await deliveriesOf(endpoint.id))[0])
      .toMatchObject({ status: 'delivered', attempts: 4, last_response_status: 204 });
  });

  it('gives a delivery up after its last retry, disables the endpoint after the failure window (audited), and retries by hand', async () => {
    receiver = await startWebhookReceiver(() => ({ status: 500 }));
    const endpoint = await hooked();
    const api = userGroupApi(client, apiToken(t));
    expectSuccess(await api.getOrCreate({ user_group_id: uniqueId('doomed') }));
    // 1 + 3 retries over 100 + 300 + 900 ms: failed after about 1.3 s.
    await expect
      .poll(async () => (await deliveriesOf(endpoint.id))[0], { timeout: 10_000 })
      .toMatchObject({ status: 'failed', attempts: 4, last_response_status: 500 });
    // Failing on past the 5 s window disables the endpoint.
    await expect
      .poll(
        async () => {
          // Each new failing delivery keeps the failures going until the window has passed.
          expectSuccess(await api.getOrCreate({ user_group_id: uniqueId('doomed') }));
          return expectSuccess(
            await client({ method: 'GET', path: `/api/admin/webhook_endpoints/${endpoint.id}`, token: apiToken(t) }),
          ).webhook_endpoint.enabled;
        },
        { timeout: 15_000, interval: 500 },
      )
      .toBe(false);
    const audit = expectSuccess(
      await client({
        method: 'GET',
        path: '/api/admin/audit_events?action=webhook_endpoint.disabled',
        token: apiToken(t),
      }),
    ).audit_events;
    expect(audit[0]).toMatchObject({ actor: { type: 'cli' }, changes: { enabled: { before: true, after: false } } });

    // Disabled: a new change is not even queued for it. (Attempts already under way when it was
    // disabled land first.)
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const before = receiver.received.length;
    expectSuccess(await api.getOrCreate({ user_group_id: uniqueId('ignored') }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.length).toBe(before);

    // Fixed: enable it and retry the failed delivery by hand.
    receiver.respond(() => ({ status: 200 }));
    expectSuccess(
      await client({
        method: 'PATCH',
        path: `/api/admin/webhook_endpoints/${endpoint.id}`,
        token: apiToken(t),
        body: { enabled: true },
      }),
    );
    const failed = (await deliveriesOf(endpoint.id)).find(
      (delivery: { status: string }) => delivery.status === 'failed',
    );
    const retried = expectSuccess(
      await client({ method: 'POST', path: `/api/admin/webhook_deliveries/${failed.id}/retry`, token: apiToken(t) }),
    ).webhook_delivery;
    expect(retried).toMatchObject({ id: failed.id, status: 'pending', attempts: 0 });
    await expect
      .poll(
        async () => (await deliveriesOf(endpoint.id)).find((delivery: { id: number }) => delivery.id === failed.id),
        { timeout: 10_000 },
      )
      .toMatchObject({
        status: 'delivered',
        attempts: 1,
      });
  });

  it("holds a group's later events back, without a due time, while its earliest one fails, then sends them in order", async () => {
    receiver = await startWebhookReceiver(() => ({ status: 500 }));
    const endpoint = await hooked(['user_group.created', 'user_group.updated']);
    const api = userGroupApi(client, apiToken(t));
    const id = uniqueId('queued');
    expectSuccess(await api.getOrCreate({ user_group_id: id, name: 'v0' }));
    expectSuccess(await api.update({ user_group_id: id, name: 'v1' }));
    expectSuccess(await api.update({ user_group_id: id, name: 'v2' }));
    await receiver.waitFor((received) => received.length >= 2);
    const queued = (await deliveriesOf(endpoint.id)).reverse();
    expect(
      queued.map((delivery: { event_type: string; attempts: number; next_attempt_at: string | null }) => [
        delivery.event_type,
        delivery.attempts > 0,
        delivery.next_attempt_at !== null,
      ]),
    ).toEqual([
      ['user_group.created', true, true],
      ['user_group.updated', false, false],
      ['user_group.updated', false, false],
    ]);
    receiver.respond(() => ({ status: 200 }));
    await receiver.waitFor(
      (received) =>
        received.filter((entry) => entry.headers['webhook-id'] !== received[0]!.headers['webhook-id']).length === 2,
      10_000,
    );
    const names = [
      ...new Map(receiver.received.map((entry) => [entry.json.id, entry.json.data.user_group.name])).values(),
    ];
    expect(names).toEqual(['v0', 'v1', 'v2']);
  });

  it('keeps delivering to a fast endpoint while another one hangs', async () => {
    receiver = await startWebhookReceiver();
    const slow = await startWebhookReceiver(() => ({ hang: true }));
    try {
      await hooked();
      expectSuccess(
        await client({
          method: 'POST',
          path: '/api/admin/webhook_endpoints',
          token: apiToken(t),
          body: { url: slow.url, events: ['user_group.created'] },
        }),
      );
      const api = userGroupApi(client, apiToken(t));
      const ids = Array.from({ length: 40 }, () => uniqueId('busy'));
      for (const id of ids) expectSuccess(await api.getOrCreate({ user_group_id: id }));
      await receiver.waitFor(
        (received) => ids.every((id) => received.some((entry) => entry.json.data.user_group.provided_id === id)),
        5000,
      );
      // All 40 reached the fast receiver while the slow one had seen only part of them: at most 16
      // attempts to one endpoint at once, each held for the whole 1 s timeout, so 40 take three rounds.
      expect(slow.received.length).toBeGreaterThan(0);
      expect(new Set(slow.received.map((entry) => entry.json.id)).size).toBeLessThan(40);
    } finally {
      await slow.close();
    }
  });
});

describe('webhooks: retention', () => {
  it('purges delivered deliveries and their events once they are older than the retention', async () => {
    const receiver = await startWebhookReceiver();
    // A retention of half a second stands in for the 30 days, checked every 100 ms.
    const t = await createTestApp({
      webhooks: { allowPrivate: true, worker: { ...FAST_WEBHOOKS, retentionMs: 500, purgeIntervalMs: 100 } },
    });
    try {
      const client = injectClient(t.app);
      expectSuccess(
        await client({
          method: 'POST',
          path: '/api/admin/webhook_endpoints',
          token: apiToken(t),
          body: { url: receiver.url, events: ['*'] },
        }),
      );
      expectSuccess(await userGroupApi(client, apiToken(t)).getOrCreate({ user_group_id: uniqueId('kept') }));
      await receiver.waitFor((received) => received.length === 1);
      const rows = async (table: string) => ((await (await t.reader()).readAll())[table] ?? []).length;
      expect(await rows('webhook_events')).toBe(1);
      await expect
        .poll(async () => [await rows('webhook_deliveries'), await rows('webhook_events')], { timeout: 10_000 })
        .toEqual([0, 0]);
      // The change itself and its audit trail stay.
      expect(await rows('audit_events')).toBeGreaterThan(0);
    } finally {
      await t.close();
      await receiver.close();
    }
  });
});

describe('webhooks: a graceful stop', () => {
  it('finishes the attempt in flight and records it before the worker stops', async () => {
    const receiver = await startWebhookReceiver(() => ({ delayMs: 400 }));
    const t = await createTestApp({ webhooks: { allowPrivate: true, worker: FAST_WEBHOOKS } });
    try {
      const client = injectClient(t.app);
      const endpoint = expectSuccess(
        await client({
          method: 'POST',
          path: '/api/admin/webhook_endpoints',
          token: apiToken(t),
          body: { url: receiver.url, events: ['*'] },
        }),
      ).webhook_endpoint;
      expectSuccess(await userGroupApi(client, apiToken(t)).getOrCreate({ user_group_id: uniqueId('stopping') }));
      await receiver.waitFor((received) => received.length === 1);
      // The receiver holds its answer for 400 ms: the worker is stopped in the middle of the attempt.
      await t.webhookWorker!.stop();
      const [delivery] = await t.runtime.store.listWebhookDeliveries({
        workspaceId: t.runtime.defaultWorkspace.id,
        environment: 'Customer',
        endpointId: endpoint.id,
        limit: 1,
      });
      expect(delivery).toMatchObject({ status: 'delivered', attempts: 1, lastResponseStatus: 200 });
    } finally {
      await t.close();
      await receiver.close();
    }
  });
});
