import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Gauge, Registry, type Metric } from 'prom-client';
import cluster from 'node:cluster';
import type { OperationsService } from '../domain/operations.service.js';
import { ErrorEnvelope } from '../wire/envelope.js';
import { PUBLIC_ROUTE } from './route-schema.js';
import { scrapeThroughPrimary } from './cluster-metrics.js';
import { createRequestMetrics } from './request-metrics.js';

// Process metrics (CPU, memory, event loop lag, GC) belong to the process, not to one app: collected
// once, into a registry every app's /metrics merges with its own.
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'ugs_' });
  }
  return processRegistry;
}

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * GET /metrics in the Prometheus text format: requests by route, method and status, latency
 * histograms, and the database pool. Routes are labelled by their pattern (unmatched paths share
 * one label) so that label cardinality stays bounded whatever clients send.
 */
export function registerMetrics(
  app: FastifyInstance,
  operations: Pick<OperationsService, 'connectionStats'>,
  others: Registry[],
): void {
  const registry = new Registry();
  // Counted off prom-client (request-metrics.ts), shown as its Counter and Histogram would show them.
  const requests = createRequestMetrics({
    requests: {
      name: 'ugs_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status.',
    },
    latency: {
      name: 'ugs_http_request_duration_seconds',
      help: 'Time from receiving a request to finishing its response, by route pattern and method.',
      buckets: LATENCY_BUCKETS,
    },
  });
  registry.registerMetric(requests.requests as unknown as Metric);
  registry.registerMetric(requests.latency as unknown as Metric);
  new Gauge({
    name: 'ugs_db_pool_connections',
    help: 'Database pool connections by state (total, idle, and callers waiting for one); absent on SQLite.',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const stats = operations.connectionStats();
      if (!stats) return;
      this.set({ state: 'total' }, stats.total);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
    },
  });

  // Synchronous with `done`: an async hook costs every request a promise and a microtask turn.
  app.addHook('onResponse', (request, reply, done) => {
    requests.observe(
      request.routeOptions.url ?? 'unmatched',
      request.method,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });

  const merged = Registry.merge([processMetrics(), registry, ...others]);
  // A cluster worker answers for the whole server (src/http/cluster-metrics.ts); one process, for itself.
  const collect = cluster.isWorker && process.send ? scrapeThroughPrimary(merged, process) : () => merged.metrics();
  let collecting: Promise<string> | undefined;
  app.get(
    '/metrics',
    {
      schema: {
        operationId: 'getMetrics',
        summary: 'Prometheus metrics',
        description: 'Text exposition format. Not authenticated: expose the port only to your monitoring network.',
        tags: ['operations'],
        ...PUBLIC_ROUTE,
        // Text when it answers; the error envelope, as JSON, when it refuses (a request without Host, a bad query).
        response: {
          200: {
            description: 'Prometheus text format 0.0.4.',
            content: { 'text/plain': { schema: { type: 'string', description: 'Prometheus text format 0.0.4.' } } },
          },
          '4xx': { description: 'Failure envelope.', content: { 'application/json': { schema: ErrorEnvelope } } },
          '5xx': { description: 'Failure envelope.', content: { 'application/json': { schema: ErrorEnvelope } } },
        },
      },
    },
    async (_request, reply) => {
      reply.type(merged.contentType);
      // Scrapes that arrive while a collection runs share it: collecting is the costly part, and
      // the endpoint is public.
      collecting ??= collect().finally(() => {
        collecting = undefined;
      });
      return collecting;
    },
  );
}
