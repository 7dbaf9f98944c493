import rateLimit from '@fastify/rate-limit';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { AppError } from '../domain/errors.js';
import type { Services } from '../domain/services.js';
import type { Store } from '../store/store.js';
import { createAuthenticationHook } from './auth.js';
import { registerErrorHandler } from './error-handler.js';
import { BODY_LIMIT_BYTES, registerJsonBodyParser } from './json-body.js';
import { registerNotFoundHandler } from './method-not-allowed.js';
import { registerOpenApi, registerOpenApiRoute } from './openapi.js';
import { requestIdOf } from './request-id.js';
import { dataSourceRoutes } from './routes/data-sources.routes.js';
import { healthRoutes } from './routes/health.routes.js';
import { schemaRoutes } from './routes/schemas.routes.js';
import { userGroupRoutes } from './routes/user-groups.routes.js';

export interface AppOptions {
  services: Services;
  store: Pick<Store, 'ping'>;
  logger: FastifyBaseLogger | false;
  /** Requests per minute per API token, or 'off'. */
  rateLimitPerMinute: number | 'off';
  version: string;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    genReqId: requestIdOf,
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    bodyLimit: BODY_LIMIT_BYTES,
    exposeHeadRoutes: false,
    ajv: {
      // Exact input: no type coercion, no silently dropped or defaulted fields.
      customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // GET /api/user carries a JSON body by contract; Fastify ignores GET bodies unless told otherwise.
  app.addHttpMethod('GET', { hasBody: true, overrideExisting: true });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  registerJsonBodyParser(app);
  registerErrorHandler(app);
  registerNotFoundHandler(app);
  await registerOpenApi(app, options.version);

  await app.register(healthRoutes, { store: options.store });
  registerOpenApiRoute(app);

  const { services } = options;
  await app.register(
    async (api) => {
      api.addHook('onRequest', createAuthenticationHook(services.apiTokens));
      // Responses carry credentials: no cache along the way may keep them.
      api.addHook('onSend', async (_request, reply) => {
        reply.header('cache-control', 'no-store');
      });
      if (options.rateLimitPerMinute !== 'off') {
        await api.register(rateLimit, {
          max: options.rateLimitPerMinute,
          timeWindow: 60_000,
          hook: 'preHandler',
          keyGenerator: (request) => request.caller.actor.type === 'api_token' ? request.caller.actor.apiTokenId : 'cli',
          errorResponseBuilder: (_request, context) =>
            new AppError('rate_limited', `This API token may make ${context.max} requests a minute; retry after ${context.after}.`, {
              headers: { 'Retry-After': String(Math.max(1, Math.ceil(context.ttl / 1000))) },
            }),
        });
      }
      await api.register(userGroupRoutes, { userGroups: services.userGroups });
      await api.register(schemaRoutes, { schemas: services.schemas });
      await api.register(dataSourceRoutes, { dataSources: services.dataSources });
    },
    { prefix: '/api' },
  );

  return app;
}
