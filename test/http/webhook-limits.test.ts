// Webhook limits (docs/api.md#webhooks), on the engine under test: at most 100 endpoints per environment,
// a delivered delivery is not retried, and a 2xx with a large body is a delivery.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_WEBHOOK_ENDPOINTS } from '../../src/domain/webhook-endpoints/webhook-endpoints.rules.js';
import type { Client } from '../support/http-client.js';
import type { TestApp } from '../support/test-app.js';
import { openWebhookApp } from '../support/webhook-app.js';
import type { WebhookReceiver } from '../support/webhook-receiver.js';
import { expectError, expectSuccess, expectUnchanged } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { apiToken } from '../support/callers.js';
import { userGroupApi } from '../support/user-group-api.js';

const ENDPOINTS = '/api/admin/webhook_endpoints';

describe('webhook limits', () => {
  let t: TestApp;
  let client: Client;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    ({ t, client, receiver } = await openWebhookApp());
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const create = (environment: 'Customer' | 'Testing' = 'Customer', events = ['api_token.revoked']) =>
    client({
      method: 'POST',
      path: ENDPOINTS,
      token: apiToken(t, { environment }),
      body: { url: `${receiver.url}/${uniqueId('hook')}`, events },
    });
  const remove = async (id: number) =>
    expectSuccess(await client({ method: 'DELETE', path: `${ENDPOINTS}/${id}`, token: apiToken(t) }));
  const deliveriesOf = async (endpointId: number) =>
    expectSuccess(
      await client({
        method: 'GET',
        path: `/api/admin/webhook_deliveries?endpoint_id=${endpointId}`,
        token: apiToken(t),
      }),
    ).webhook_deliveries;

  it('counts a 2xx with a body over 64 KiB as delivered, and refuses to send a delivered delivery again (409)', async () => {
    receiver.respond(() => ({ status: 200, body: 'x'.repeat(256 * 1024) }));
    const endpoint = expectSuccess(await create('Customer', ['user_group.created'])).webhook_endpoint;
    expectSuccess(await userGroupApi(client, apiToken(t)).getOrCreate({ user_group_id: uniqueId('large-answer') }));
    await expect
      .poll(async () => (await deliveriesOf(endpoint.id))[0], { timeout: 10_000 })
      .toMatchObject({ status: 'delivered', attempts: 1, last_response_status: 200, last_error: null });
    const [delivered] = await deliveriesOf(endpoint.id);
    const res = await expectUnchanged(t, () =>
      client({ method: 'POST', path: `/api/admin/webhook_deliveries/${delivered.id}/retry`, token: apiToken(t) }),
    );
    expectError(res, 409, 'webhook_delivery_delivered');
    await remove(endpoint.id);
  });

  it(`allows at most ${MAX_WEBHOOK_ENDPOINTS} endpoints per environment (409 webhook_endpoint_limit), even when created at once`, async () => {
    const ids: number[] = [];
    for (let index = 0; index < MAX_WEBHOOK_ENDPOINTS - 3; index += 1)
      ids.push(expectSuccess(await create()).webhook_endpoint.id);
    // Five at once for the last three places: three get one.
    const racing = await Promise.all(Array.from({ length: 5 }, () => create()));
    expect(racing.map((res) => res.status).sort()).toEqual([200, 200, 200, 409, 409]);
    for (const res of racing)
      if (res.status === 200) ids.push(res.body.webhook_endpoint.id);
      else expectError(res, 409, 'webhook_endpoint_limit');
    const refused = await expectUnchanged(t, () => create());
    expectError(refused, 409, 'webhook_endpoint_limit');
    // The other environment has its own hundred.
    const testing = expectSuccess(await create('Testing')).webhook_endpoint;
    expectSuccess(
      await client({
        method: 'DELETE',
        path: `${ENDPOINTS}/${testing.id}`,
        token: apiToken(t, { environment: 'Testing' }),
      }),
    );
    // A deleted endpoint frees its place.
    await remove(ids.pop()!);
    ids.push(expectSuccess(await create()).webhook_endpoint.id);
    for (const id of ids) await remove(id);
  });
});
