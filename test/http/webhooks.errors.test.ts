// Webhook endpoints refuse bad input with a clear error and change nothing (docs/api.md#wire-conventions, docs/api.md#webhooks).
import { afterAll, beforeAll, describe, it } from 'vitest';
import { injectClient, type Client } from '../support/http-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { expectError, expectSuccess, expectUnchanged } from './helpers.js';
import { apiToken } from '../support/callers.js';

const ENDPOINTS = '/api/admin/webhook_endpoints';

describe('webhook endpoints: refusals', () => {
  let t: TestApp;
  let client: Client;
  let endpointId: number;
  let otherWorkspaceEndpointId: number;

  beforeAll(async () => {
    // Private addresses allowed, so that only the rules under test refuse a loopback URL here.
    t = await createTestApp({ webhooks: { allowPrivate: true } });
    client = injectClient(t.app);
    const create = async (token: string) =>
      expectSuccess(
        await client({
          method: 'POST',
          path: ENDPOINTS,
          token,
          body: { url: 'http://127.0.0.1:9/hooks', events: ['*'] },
        }),
      ).webhook_endpoint.id as number;
    endpointId = await create(apiToken(t));
    otherWorkspaceEndpointId = await create(apiToken(t, { workspace: 'other' }));
  });
  afterAll(async () => {
    await t?.close();
  });

  const refused = async (
    request: { method: string; path: string; body?: unknown; token?: string },
    status: number,
    code: string,
    field?: string | null,
  ) => expectError(await expectUnchanged(t, () => client({ token: apiToken(t), ...request })), status, code, field);

  it.each([
    [
      'an unknown event type',
      { url: 'http://127.0.0.1:9/', events: ['user_group.renamed'] },
      'invalid_field',
      'events',
    ],
    ['no event type', { url: 'http://127.0.0.1:9/', events: [] }, 'invalid_field', 'events'],
    [
      '"*" beside a type',
      { url: 'http://127.0.0.1:9/', events: ['*', 'user_group.created'] },
      'invalid_field',
      'events',
    ],
    [
      'a type twice',
      { url: 'http://127.0.0.1:9/', events: ['user_group.created', 'user_group.created'] },
      'invalid_field',
      'events',
    ],
    ['events missing', { url: 'http://127.0.0.1:9/' }, 'missing_field', 'events'],
    ['url missing', { events: ['*'] }, 'missing_field', 'url'],
    ['a URL that is not one', { url: 'hooks', events: ['*'] }, 'invalid_field', 'url'],
    ['an ftp URL', { url: 'ftp://127.0.0.1/hooks', events: ['*'] }, 'invalid_field', 'url'],
    ['credentials in the URL', { url: 'http://user:pw@127.0.0.1/hooks', events: ['*'] }, 'invalid_field', 'url'],
    ['a fragment', { url: 'http://127.0.0.1/hooks#x', events: ['*'] }, 'invalid_field', 'url'],
    [
      'a URL over 2048 characters',
      { url: `http://127.0.0.1/${'a'.repeat(2048)}`, events: ['*'] },
      'invalid_field',
      'url',
    ],
    [
      'an unknown environment',
      { url: 'http://127.0.0.1:9/', events: ['*'], environment: 'Staging' },
      'invalid_field',
      'environment',
    ],
    [
      'a control character in the description',
      { url: 'http://127.0.0.1:9/', events: ['*'], description: 'a\u0007b' },
      'invalid_field',
      'description',
    ],
    ['an unknown field', { url: 'http://127.0.0.1:9/', events: ['*'], secret: 'mine' }, 'unknown_field', 'secret'],
  ])('refuses creating one with %s', async (_case, body, code, field) => {
    await refused({ method: 'POST', path: ENDPOINTS, body }, 400, code, field);
  });

  it('refuses changing one with nothing to change, or with a bad value', async () => {
    await refused({ method: 'PATCH', path: `${ENDPOINTS}/${endpointId}`, body: {} }, 400, 'bad_request', null);
    await refused(
      { method: 'PATCH', path: `${ENDPOINTS}/${endpointId}`, body: { enabled: 'yes' } },
      400,
      'invalid_field',
      'enabled',
    );
    await refused(
      { method: 'PATCH', path: `${ENDPOINTS}/${endpointId}`, body: { url: 'gopher://127.0.0.1/' } },
      400,
      'invalid_field',
      'url',
    );
    await refused(
      { method: 'PATCH', path: `${ENDPOINTS}/${endpointId}`, body: { events: ['nope'] } },
      400,
      'invalid_field',
      'events',
    );
  });

  it('finds no endpoint of another workspace or environment, nor one that does not exist', async () => {
    for (const path of [
      `${ENDPOINTS}/${otherWorkspaceEndpointId}`,
      `${ENDPOINTS}/999999999`,
      `${ENDPOINTS}/${endpointId}?environment=Testing`,
    ]) {
      await refused({ method: 'GET', path }, 404, 'webhook_endpoint_not_found', null);
      await refused({ method: 'PATCH', path, body: { description: 'x' } }, 404, 'webhook_endpoint_not_found', null);
      await refused({ method: 'DELETE', path }, 404, 'webhook_endpoint_not_found', null);
      const [base, query = ''] = path.split('?');
      await refused(
        { method: 'POST', path: `${base}/rotate_secret${query ? `?${query}` : ''}` },
        404,
        'webhook_endpoint_not_found',
        null,
      );
    }
    await refused(
      { method: 'GET', path: `/api/admin/webhook_deliveries?endpoint_id=${otherWorkspaceEndpointId}` },
      404,
      'webhook_endpoint_not_found',
      null,
    );
    await refused(
      { method: 'POST', path: '/api/admin/webhook_deliveries/999999999/retry' },
      404,
      'webhook_delivery_not_found',
      null,
    );
  });

  it('refuses bad ids, filters and cursors', async () => {
    await refused({ method: 'GET', path: `${ENDPOINTS}/0` }, 400, 'invalid_field', 'id');
    await refused({ method: 'GET', path: '/api/admin/webhook_deliveries?status=lost' }, 400, 'invalid_field', 'status');
    await refused({ method: 'GET', path: '/api/admin/webhook_deliveries?cursor=abc' }, 400, 'invalid_field', 'cursor');
    await refused({ method: 'GET', path: '/api/admin/webhook_deliveries?limit=1001' }, 400, 'invalid_field', 'limit');
  });

  it('needs the admin scope for every webhook route', async () => {
    const token = apiToken(t, { scope: 'write' });
    for (const [method, path] of [
      ['POST', ENDPOINTS],
      ['GET', ENDPOINTS],
      ['GET', `${ENDPOINTS}/${endpointId}`],
      ['PATCH', `${ENDPOINTS}/${endpointId}`],
      ['DELETE', `${ENDPOINTS}/${endpointId}`],
      ['POST', `${ENDPOINTS}/${endpointId}/rotate_secret`],
      ['GET', '/api/admin/webhook_deliveries'],
      ['POST', '/api/admin/webhook_deliveries/1/retry'],
    ] as const) {
      const body =
        method === 'POST' && path === ENDPOINTS
          ? { url: 'http://127.0.0.1:9/', events: ['*'] }
          : method === 'PATCH'
            ? { description: 'x' }
            : undefined;
      await refused({ method, path, token, ...(body ? { body } : {}) }, 403, 'insufficient_scope', null);
    }
  });
});
