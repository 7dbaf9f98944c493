import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { inEnvironment } from '../../domain/tenancy.js';
import type { WebhookEndpointService } from '../../domain/webhook-endpoints/webhook-endpoints.service.js';
import { EnvironmentQuery, NoQuery } from '../../wire/common.schemas.js';
import { decodeCursor, PageResponse, pageSize, toPageResponse } from '../../wire/cursor.js';
import { Success } from '../../wire/envelope.js';
import { apiRouteSchema } from '../route-schema.js';
import { toWebhookDelivery, toWebhookEndpoint } from '../../wire/webhook.presenter.js';
import {
  CreateWebhookEndpointBody,
  IssuedWebhookEndpointResponse,
  UpdateWebhookEndpointBody,
  WebhookDelivery,
  WebhookDeliveryParams,
  WebhookDeliveryQuery,
  WebhookDeliveryResponse,
  WebhookEndpoint,
  WebhookEndpointParams,
  WebhookEndpointResponse,
} from '../../wire/webhooks.schemas.js';

/** Endpoints (secrets shown once), their deliveries, and a manual retry. */
export const webhookRoutes: FastifyPluginAsyncTypebox<{ webhookEndpoints: WebhookEndpointService }> = async (
  app,
  { webhookEndpoints },
) => {
  const params = { params: WebhookEndpointParams, querystring: EnvironmentQuery };
  const callerIn = (request: {
    caller: Parameters<typeof inEnvironment>[0];
    query: { environment?: 'Customer' | 'Testing' };
  }) => inEnvironment(request.caller, request.query.environment);

  app.post(
    '/admin/webhook_endpoints',
    {
      schema: apiRouteSchema('admin', 'Create a webhook endpoint', IssuedWebhookEndpointResponse, {
        operationId: 'createWebhookEndpoint',
        description: "environment defaults to the API token's. The signing secret appears in this response only.",
        body: CreateWebhookEndpointBody,
        querystring: NoQuery,
      }),
    },
    async (request) => {
      const { body } = request;
      const { record, secret } = await webhookEndpoints.create(request.caller, {
        url: body.url,
        events: body.events,
        environment: body.environment,
        description: body.description,
      });
      return { success: 1 as const, webhook_endpoint: { ...toWebhookEndpoint(record), secret } };
    },
  );

  app.get(
    '/admin/webhook_endpoints',
    {
      schema: apiRouteSchema(
        'admin',
        'List webhook endpoints (without secrets)',
        Type.Object({ success: Success, webhook_endpoints: Type.Array(WebhookEndpoint) }),
        { operationId: 'listWebhookEndpoints', querystring: EnvironmentQuery },
      ),
    },
    async (request) => ({
      success: 1 as const,
      webhook_endpoints: (await webhookEndpoints.list(callerIn(request))).map(toWebhookEndpoint),
    }),
  );

  app.get(
    '/admin/webhook_endpoints/:id',
    {
      schema: apiRouteSchema('admin', 'Show a webhook endpoint', WebhookEndpointResponse, {
        operationId: 'getWebhookEndpoint',
        ...params,
      }),
    },
    async (request) => ({
      success: 1 as const,
      webhook_endpoint: toWebhookEndpoint(await webhookEndpoints.show(callerIn(request), Number(request.params.id))),
    }),
  );

  app.patch(
    '/admin/webhook_endpoints/:id',
    {
      schema: apiRouteSchema('admin', 'Change a webhook endpoint', WebhookEndpointResponse, {
        operationId: 'updateWebhookEndpoint',
        description: 'Any of url, events, description, enabled. Enabling starts a new failure window.',
        ...params,
        body: UpdateWebhookEndpointBody,
      }),
    },
    async (request) => ({
      success: 1 as const,
      webhook_endpoint: toWebhookEndpoint(
        await webhookEndpoints.update(callerIn(request), Number(request.params.id), request.body),
      ),
    }),
  );

  app.delete(
    '/admin/webhook_endpoints/:id',
    {
      schema: apiRouteSchema('admin', 'Delete a webhook endpoint and its deliveries', WebhookEndpointResponse, {
        operationId: 'deleteWebhookEndpoint',
        ...params,
      }),
    },
    async (request) => ({
      success: 1 as const,
      webhook_endpoint: toWebhookEndpoint(await webhookEndpoints.remove(callerIn(request), Number(request.params.id))),
    }),
  );

  app.post(
    '/admin/webhook_endpoints/:id/rotate_secret',
    {
      schema: apiRouteSchema('admin', "Rotate a webhook endpoint's signing secret", IssuedWebhookEndpointResponse, {
        operationId: 'rotateWebhookEndpointSecret',
        description:
          'The new secret (in this response only) signs from now on; the previous one signs beside it for 24 hours.',
        ...params,
      }),
    },
    async (request) => {
      const { record, secret } = await webhookEndpoints.rotateSecret(callerIn(request), Number(request.params.id));
      return { success: 1 as const, webhook_endpoint: { ...toWebhookEndpoint(record), secret } };
    },
  );

  app.get(
    '/admin/webhook_deliveries',
    {
      schema: apiRouteSchema('admin', 'List webhook deliveries', PageResponse('webhook_deliveries', WebhookDelivery), {
        operationId: 'listWebhookDeliveries',
        description: 'Newest first, cursor-paginated; filter by endpoint and status (pending, delivered, failed).',
        querystring: WebhookDeliveryQuery,
      }),
    },
    async (request) => {
      const { query } = request;
      const page = await webhookEndpoints.listDeliveries(callerIn(request), {
        endpointId: query.endpoint_id === undefined ? undefined : Number(query.endpoint_id),
        status: query.status,
        beforeId: decodeCursor(query.cursor),
        limit: pageSize(query.limit),
      });
      return toPageResponse('webhook_deliveries', page, toWebhookDelivery);
    },
  );

  app.post(
    '/admin/webhook_deliveries/:id/retry',
    {
      schema: apiRouteSchema('admin', 'Retry a webhook delivery now', WebhookDeliveryResponse, {
        operationId: 'retryWebhookDelivery',
        description:
          'Queues it again at once with a fresh attempt budget, whatever its status (a delivered one is sent again).',
        params: WebhookDeliveryParams,
        querystring: EnvironmentQuery,
      }),
    },
    async (request) => ({
      success: 1 as const,
      webhook_delivery: toWebhookDelivery(
        await webhookEndpoints.retryDelivery(callerIn(request), Number(request.params.id)),
      ),
    }),
  );
};
