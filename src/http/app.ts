import { requestFailure } from '../wire/request-errors.js';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { Services } from '../domain/services.js';
import { registerAuthentication } from './auth.js';
import { registerApiCors } from './cors.js';
import { registerErrorHandler } from './error-handler.js';
import { registerIdempotency } from './idempotency.js';
import { continueUnlessStreamed, registerStreamedBodies } from './streamed-body.js';
import { BODY_LIMIT_BYTES, registerJsonBodyParser } from './json-body.js';
import { registerMetrics } from './metrics.js';
import { embedTokenMetrics } from './embed-token-metrics.js';
import { registerNotFoundHandler } from './method-not-allowed.js';
import { registerOpenApi, registerOpenApiRoute } from './openapi.js';
import { assertQueryText } from './query-text.js';
import { createRateLimit } from './rate-limit.js';
import type { RateLimitOption } from '../rate-limit/rate-limit-setting.js';
import { requestIdOf } from './request-id.js';
import { lazyRequestLoggerFactory } from './request-logger.js';
import { serverLimitOptions } from './server-limits.js';
import { DEFAULT_SERVER_TIMEOUTS, type ServerTimeouts } from '../config/server-timeouts.js';
import { adminUserGroupRoutes } from './routes/admin-user-groups.routes.js';
import { userGroupSyncRoutes } from './routes/user-group-sync.routes.js';
import { userGroupImportRoutes } from './routes/user-group-import.routes.js';
import { apiTokenRoutes } from './routes/api-tokens.routes.js';
import { auditEventRoutes } from './routes/audit-events.routes.js';
import { usageRoutes } from './routes/usage.routes.js';
import { personSessionRoutes } from './routes/person-sessions.routes.js';
import { dataSourceRoutes } from './routes/data-sources.routes.js';
import { discoveryRoutes } from './routes/discovery.routes.js';
import { embedTokenRevocationRoutes, revocationDocumentRoutes } from './routes/embed-token-revocations.routes.js';
import { healthRoutes } from './routes/health.routes.js';
import { embedTokenIntrospectionRoutes, embedTokenRefreshRoutes } from './routes/embed-token-introspection.routes.js';
import { signingKeyRoutes } from './routes/signing-keys.routes.js';
import { schemaRoutes } from './routes/schemas.routes.js';
import { userGroupRoutes } from './routes/user-groups.routes.js';
import { webhookRoutes } from './routes/webhooks.routes.js';
import { loadConsoleAssets } from './console/console-assets.js';
import { consoleRoutes, consoleUrlRewrite } from './console/console.routes.js';
import { consoleSessionCaller } from './console/session-cookie.js';
import type { OidcSettings } from '../config/oidc-settings.js';

export interface AppOptions {
  services: Services;
  logger: FastifyBaseLogger | false;
  /** Per API token; 'off' sends no RateLimit headers and does no limiter work at all. */
  rateLimit: RateLimitOption;
  version: string;
  /** Only a listening server uses them; DEFAULT_SERVER_TIMEOUTS when not given. */
  timeouts?: ServerTimeouts;
  /** The service's public URL, the document's `servers` (read when /openapi.json is first asked for). */
  publicUrl: () => string;
  /** Whether the process is stopping: /readyz then fails while requests are still served. */
  isStopping?: () => boolean;
  /** Figures of the process's other parts (the webhook worker) that /metrics shows beside the app's. */
  metrics?: Registry[];
  /** The web origins granted cross-origin access to /api (--cors-origins); none unless given. */
  corsOrigins?: readonly string[];
  /** Console sign-in through an identity provider (--oidc-issuer); none unless given. */
  oidc?: OidcSettings;
  /** Whether an admin API token may sign in to the console (--token-sign-in); on unless false. */
  tokenSignIn?: boolean;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...(options.logger
      ? { loggerInstance: options.logger, childLoggerFactory: lazyRequestLoggerFactory }
      : { logger: false }),
    genReqId: requestIdOf,
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    bodyLimit: BODY_LIMIT_BYTES,
    ...serverLimitOptions(options.timeouts ?? DEFAULT_SERVER_TIMEOUTS),
    exposeHeadRoutes: false,
    routerOptions: { ignoreTrailingSlash: true },
    rewriteUrl: (request) => consoleUrlRewrite(request.url ?? '/'),
    // While draining, requests still arriving on open connections get the contract's 503 envelope
    // (from the hook below) rather than Fastify's own body.
    return503OnClosing: false,
    ajv: {
      // Exact input: no type coercion, no silently dropped or defaulted fields.
      customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // GET /api/user carries a JSON body by contract; Fastify ignores GET bodies unless told otherwise.
  app.addHttpMethod('GET', { hasBody: true, overrideExisting: true });

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // The hooks every request runs are synchronous and take `done`: an async hook costs each request
  // a promise and a turn of the microtask queue (docs/performance.md).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    // HTTP/1.1 requires Host (RFC 9112 §3.2); HTTP/1.0 has none to send.
    if (request.headers.host === undefined && request.raw.httpVersion !== '1.0') {
      throw requestFailure.missingHost();
    }
    if (closing) {
      reply.header('connection', 'close');
      throw requestFailure.shuttingDown();
    }
    // API responses carry credentials (and errors about them): no cache along the way may keep one.
    if (request.url.startsWith('/api/')) reply.header('cache-control', 'no-store');
    continueUnlessStreamed(request, reply);
    done();
  });
  registerApiCors(app, options.corsOrigins ?? []);
  // Every route's query values, before the route's own hooks and validation read them.
  app.addHook('preValidation', (request, _reply, done) => {
    assertQueryText(request.url);
    done();
  });
  registerJsonBodyParser(app);
  registerErrorHandler(app);
  registerNotFoundHandler(app);
  await registerOpenApi(app, { version: options.version, publicUrl: options.publicUrl });

  // Before any route: each route copies the hooks that exist when it is registered.
  registerMetrics(app, options.services.operations, [
    ...(options.metrics ?? []),
    embedTokenMetrics(
      options.services.embedTokens,
      options.services.embedTokenRevocations,
      options.services.embedTokenLifecycle,
    ),
  ]);
  await app.register(healthRoutes, {
    operations: options.services.operations,
    isStopping: options.isStopping ?? (() => false),
    version: options.version,
  });
  registerOpenApiRoute(app);

  const { services } = options;
  const admission = options.rateLimit === 'off' ? undefined : createRateLimit(options.rateLimit);
  await app.register(discoveryRoutes, { embedTokens: services.embedTokens });
  await app.register(revocationDocumentRoutes, { embedTokenRevocations: services.embedTokenRevocations });
  await app.register(embedTokenIntrospectionRoutes, {
    lifecycle: services.embedTokenLifecycle,
    apiTokens: services.apiTokens,
    admission,
  });
  // Outside the authenticated /api plugin below: the embed token is the credential.
  await app.register(embedTokenRefreshRoutes, {
    prefix: '/api',
    lifecycle: services.embedTokenLifecycle,
    rateLimit: options.rateLimit,
  });
  const assets = loadConsoleAssets();
  if (assets.size === 0) app.log.warn('the admin console is not built (npm run build): /console answers 404');
  const people = options.oidc && services.oidcSignIn(options.oidc);
  await app.register(consoleRoutes, {
    consoleSessions: services.consoleSessions,
    assets,
    admission,
    people,
    tokenSignIn: options.tokenSignIn ?? true,
    publicUrl: options.publicUrl,
  });
  await app.register(
    async (api) => {
      registerAuthentication(
        api,
        services.apiTokens,
        admission,
        consoleSessionCaller(services.consoleSessions, people),
      );
      registerIdempotency(api, services.idempotency);
      registerStreamedBodies(api);
      await api.register(userGroupRoutes, {
        userGroups: services.userGroups,
        embedTokens: services.embedTokens,
        embedTokenLifecycle: services.embedTokenLifecycle,
      });
      await api.register(embedTokenRevocationRoutes, { embedTokenRevocations: services.embedTokenRevocations });
      await api.register(schemaRoutes, { schemas: services.schemas });
      await api.register(dataSourceRoutes, { dataSources: services.dataSources });
      await api.register(adminUserGroupRoutes, { userGroupAdmin: services.userGroupAdmin });
      await api.register(userGroupSyncRoutes, { userGroupSync: services.userGroupSync });
      await api.register(userGroupImportRoutes, { userGroupTransfer: services.userGroupTransfer });
      await api.register(apiTokenRoutes, { apiTokens: services.apiTokens });
      await api.register(auditEventRoutes, { audit: services.audit });
      await api.register(signingKeyRoutes, { signingKeys: services.signingKeys });
      await api.register(webhookRoutes, { webhookEndpoints: services.webhookEndpoints });
      await api.register(usageRoutes, { usage: services.usage });
      await api.register(personSessionRoutes, { personSessions: services.personSessions });
    },
    { prefix: '/api' },
  );

  return app;
}
