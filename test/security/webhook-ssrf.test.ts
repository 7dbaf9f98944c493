// SSRF rules of SPEC §13: a webhook never reaches a loopback, private, link-local or unspecified
// address unless allowed, neither at creation nor at delivery, where a name is resolved again (DNS
// rebinding: public when the endpoint was created, private when the event is sent).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemResolver, type Resolver } from '../../src/webhooks/address-policy.js';
import { injectClient, type Client } from '../support/http-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { apiToken, expectError, expectSuccess, expectUnchanged, uniqueId, userGroupApi } from '../http/helpers.js';

const ENDPOINTS = '/api/admin/webhook_endpoints';
const PUBLIC = '93.184.216.34';

describe('webhooks: private addresses refused unless allowed', () => {
  let t: TestApp;
  let client: Client;
  let receiver: WebhookReceiver;
  /** rebind.test answers public until `rebound`, loopback after; public.test always public; mixed.test both. */
  let rebound = false;
  const resolve: Resolver = async (host) => {
    if (host === 'rebind.test') return [rebound ? '127.0.0.1' : PUBLIC];
    if (host === 'public.test') return [PUBLIC];
    if (host === 'mixed.test') return [PUBLIC, '10.0.0.7'];
    return systemResolver(host);
  };

  beforeAll(async () => {
    t = await createTestApp({
      webhooks: {
        resolve,
        worker: { pollIntervalMs: 20, retryDelaysMs: [60_000], attemptTimeoutMs: 1000, leaseMs: 5000 },
      },
    });
    client = injectClient(t.app);
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const create = (url: string) =>
    client({ method: 'POST', path: ENDPOINTS, token: apiToken(t), body: { url, events: ['*'] } });

  it.each([
    'http://127.0.0.1:8080/hooks',
    'http://localhost/hooks',
    'http://[::1]/hooks',
    'http://0.0.0.0/hooks',
    'http://10.1.2.3/hooks',
    'http://172.16.0.1/hooks',
    'http://192.168.1.1/hooks',
    'http://169.254.169.254/latest/meta-data',
    'http://[fe80::1]/hooks',
    'http://[fd00::1]/hooks',
    'http://[::ffff:127.0.0.1]/hooks',
    'http://mixed.test/hooks',
  ])('refuses %s at creation', async (url) => {
    const res = await expectUnchanged(t, () => create(url));
    expectError(res, 400, 'invalid_field', 'url');
    expect(res.body.error.message).toMatch(/loopback, private, link-local or unspecified/);
  });

  it('refuses a private address as a new URL', async () => {
    const { id } = expectSuccess(await create('http://public.test/hooks')).webhook_endpoint;
    const res = await expectUnchanged(t, () =>
      client({
        method: 'PATCH',
        path: `${ENDPOINTS}/${id}`,
        token: apiToken(t),
        body: { url: 'http://127.0.0.1/hooks' },
      }),
    );
    expectError(res, 400, 'invalid_field', 'url');
    expectSuccess(await client({ method: 'DELETE', path: `${ENDPOINTS}/${id}`, token: apiToken(t) }));
  });

  it('refuses at delivery a name that resolved public at creation and private since', async () => {
    const port = new URL(receiver.url).port;
    const endpoint = expectSuccess(await create(`http://rebind.test:${port}/hooks`)).webhook_endpoint;
    rebound = true;
    expectSuccess(await userGroupApi(client, apiToken(t)).getOrCreate({ user_group_id: uniqueId('rebound') }));
    await expect
      .poll(
        async () =>
          expectSuccess(
            await client({
              method: 'GET',
              path: `/api/admin/webhook_deliveries?endpoint_id=${endpoint.id}`,
              token: apiToken(t),
            }),
          ).webhook_deliveries[0],
        {
          timeout: 10_000,
        },
      )
      .toMatchObject({
        status: 'pending',
        attempts: 1,
        last_response_status: null,
        last_error: expect.stringMatching(/rebind\.test resolves to 127\.0\.0\.1/),
      });
    // The receiver listens on 127.0.0.1 at that port: had the address been used, it would have the event.
    expect(receiver.received).toEqual([]);
  });
});
