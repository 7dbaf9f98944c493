// SSRF rules of webhooks (docs/api.md#webhooks): a webhook reaches only global unicast addresses unless allowed. A literal
// address (or localhost) is judged at creation; a name only at delivery, where it is resolved at each
// attempt (DNS rebinding: public when the endpoint was created, private when the event is sent). The
// tenant is told one generic message; what a name resolved to goes to the operator's log only.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSED_DESTINATION, systemResolver, type Resolver } from '../../src/webhooks/address-policy.js';
import { injectClient, type Client } from '../support/http-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { expectError, expectSuccess, expectUnchanged } from '../http/helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { apiToken } from '../support/callers.js';
import { userGroupApi } from '../support/user-group-api.js';

const ENDPOINTS = '/api/admin/webhook_endpoints';
const PUBLIC = '93.184.216.34';

describe('webhooks: private addresses refused unless allowed', () => {
  let t: TestApp;
  let client: Client;
  let receiver: WebhookReceiver;
  /** rebind.test answers public until `rebound`, loopback after; public.test always public; mixed.test both. */
  let rebound = false;
  let operatorLog = '';
  const resolve: Resolver = async (host) => {
    if (host === 'internal.test') return ['10.0.0.8'];
    if (host.endsWith('.invalid'))
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    if (host === 'rebind.test') return [rebound ? '127.0.0.1' : PUBLIC];
    if (host === 'public.test') return [PUBLIC];
    if (host === 'mixed.test') return [PUBLIC, '10.0.0.7'];
    return systemResolver(host);
  };

  beforeAll(async () => {
    t = await createTestApp({
      log: {
        level: 'info',
        destination: new Writable({
          write(chunk: Buffer, _encoding, done) {
            operatorLog += chunk.toString();
            done();
          },
        }),
      },
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
    'http://app.localhost/hooks',
    // IPv6 forms that embed a refused IPv4 address, and reserved IPv4 ranges.
    'http://[::127.0.0.1]/',
    'http://[64:ff9b::7f00:1]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[2002:7f00:1::]/',
    'http://[::ffff:0:7f00:1]/',
    'http://198.18.0.1/',
    'http://192.0.0.1/',
    'http://192.0.2.1/',
    'http://203.0.113.5/',
    'http://240.0.0.1/',
    'http://[2001:db8::1]/',
    'http://[ff02::1]/',
  ])('refuses %s at creation, with the one generic message', async (url) => {
    const res = await expectUnchanged(t, () => create(url));
    expectError(res, 400, 'invalid_field', 'url');
    expect(res.body.error.message).toBe(`url is refused: ${REFUSED_DESTINATION}.`);
  });

  it('resolves no name at creation: one that does not exist yet, or resolves privately, is registered (and judged at delivery)', async () => {
    for (const url of ['http://not-yet-registered.invalid/hooks', 'http://internal.test/hooks', 'http://mixed.test/']) {
      const { id } = expectSuccess(await create(url)).webhook_endpoint;
      expectSuccess(await client({ method: 'DELETE', path: `${ENDPOINTS}/${id}`, token: apiToken(t) }));
    }
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
        last_error: REFUSED_DESTINATION,
      });
    // The receiver listens on 127.0.0.1 at that port: had the address been used, it would have the event.
    expect(receiver.received).toEqual([]);
    // What the name resolved to is in the operator's log, not in what the tenant reads.
    expect(operatorLog).toContain('rebind.test resolves to 127.0.0.1');
  });

  it('tells the tenant the same at delivery whether a name resolves privately or not at all', async () => {
    const lastError = async (endpointId: number) =>
      expectSuccess(
        await client({
          method: 'GET',
          path: `/api/admin/webhook_deliveries?endpoint_id=${endpointId}`,
          token: apiToken(t),
        }),
      ).webhook_deliveries[0]?.last_error ?? null;
    for (const host of ['internal.test', 'no-such-name.invalid']) {
      const endpoint = expectSuccess(await create(`http://${host}/hooks`)).webhook_endpoint;
      expectSuccess(await userGroupApi(client, apiToken(t)).getOrCreate({ user_group_id: uniqueId('probe') }));
      await expect.poll(() => lastError(endpoint.id), { timeout: 10_000 }).toBe(REFUSED_DESTINATION);
      expectSuccess(await client({ method: 'DELETE', path: `${ENDPOINTS}/${endpoint.id}`, token: apiToken(t) }));
    }
    expect(operatorLog).toContain('internal.test resolves to 10.0.0.8');
  });
});
