import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './http/app.js';
import { usageMetrics } from './http/usage-metrics.js';

export { serveMetricsToWorkers } from './http/cluster-metrics.js';
import { createLogger } from './logger.js';
import type { ServerTimeouts } from './config/server-timeouts.js';
import type { OidcSettings } from './config/oidc-settings.js';
import type { RateLimitOption } from './rate-limit/rate-limit-setting.js';
import type { Runtime } from './runtime.js';
import { startWebhookWorker, type WebhookWorkerSettings } from './webhooks/delivery-worker.js';

export interface ServeOptions {
  port: number;
  host: string;
  logLevel: string;
  rateLimit: RateLimitOption;
  version: string;
  /** How long SIGTERM waits for in-flight requests before closing anyway. */
  drainTimeoutMs: number;
  /** How long SIGTERM keeps serving, with /readyz failing, before the drain: a load balancer's cue. */
  shutdownDelayMs: number;
  /** How long the server waits on slow or idle clients. */
  timeouts: ServerTimeouts;
  /** The webhook delivery worker every serving process runs (its defaults where not given). */
  webhooks: Partial<WebhookWorkerSettings>;
  /** The web origins granted cross-origin access to /api (none when empty). */
  corsOrigins: readonly string[];
  /** Console sign-in through an identity provider (none when absent). */
  oidc?: OidcSettings;
  /** Whether an admin API token may sign in to the console. */
  tokenSignIn?: boolean;
}

export interface RunningServer {
  app: FastifyInstance;
  stop(): Promise<void>;
}

export async function startServer(runtime: Runtime, options: ServeOptions): Promise<RunningServer> {
  const logger = createLogger(options.logLevel);
  const webhooks = startWebhookWorker({
    store: runtime.store,
    cipher: runtime.keys.keyring,
    clock: runtime.clock,
    logger: logger.child({ component: 'webhooks' }),
    settings: options.webhooks,
  });
  // Set when a stop begins: /readyz fails from then on, so a load balancer stops sending here.
  let unready = false;
  const app = await buildApp({
    isStopping: () => unready,
    services: runtime.services,
    logger,
    rateLimit: options.rateLimit,
    version: options.version,
    publicUrl: runtime.publicUrl,
    timeouts: options.timeouts,
    corsOrigins: options.corsOrigins,
    ...(options.oidc ? { oidc: options.oidc } : {}),
    ...(options.tokenSignIn === undefined ? {} : { tokenSignIn: options.tokenSignIn }),
    metrics: [webhooks.metrics.registry, ...(runtime.usage ? [usageMetrics(runtime.usage)] : [])],
  }).catch(async (error: unknown) => {
    await webhooks.stop();
    throw error;
  });
  await app.listen({ port: options.port, host: options.host }).catch(async (error: unknown) => {
    await webhooks.stop();
    throw error;
  });
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      unready = true;
      if (options.shutdownDelayMs > 0) await sleep(options.shutdownDelayMs);
      // app.close() stops accepting, answers new requests on open sockets with 503 and waits for
      // in-flight ones; the timer bounds a client that never finishes.
      const timer = setTimeout(() => app.server.closeAllConnections(), options.drainTimeoutMs);
      // A sync in progress stops at its next step, writing nothing, rather than holding up the drain.
      runtime.services.userGroupSync.stop();
      try {
        await app.close();
      } finally {
        clearTimeout(timer);
        // Attempts in flight finish (each within its timeout) before the database closes under them.
        await webhooks.stop();
        await runtime.close();
      }
    })();
    return stopping;
  };
  return { app, stop };
}
