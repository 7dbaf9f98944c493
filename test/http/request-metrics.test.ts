import { describe, expect, it } from 'vitest';
import { AggregatorRegistry, Counter, Histogram, Registry, type Metric } from 'prom-client';
import { createRequestMetrics } from '../../src/http/request-metrics.js';

// The per-request series are counted without prom-client (src/http/request-metrics.ts); /metrics
// must read exactly as prom-client's own Counter and Histogram would have shown the same requests.
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const REQUESTS = {
  name: 'ugs_http_requests_total',
  help: 'HTTP requests answered, by route pattern, method and status.',
};
const LATENCY = { name: 'ugs_http_request_duration_seconds', help: 'Time to answer.', buckets: BUCKETS };

/** Requests of several routes, methods and statuses, with durations on, between and beyond the bounds. */
const OBSERVED: Array<[string, string, number, number]> = [
  ['/api/user', 'GET', 200, 0.0004],
  ['/api/user', 'GET', 200, 0.001],
  ['unmatched', 'GET', 404, 0.00007],
  ['/api/user', 'PUT', 404, 0.3],
  ['/api/user', 'GET', 401, 12.5],
  ['/healthz', 'GET', 200, 0],
  ['/api/user', 'GET', 200, 0.0123456789],
  ['/api/user', 'PUT', 200, 10],
  ['unmatched', 'POST', 405, 2.5000001],
];

function registries() {
  const prom = new Registry();
  const counter = new Counter({ ...REQUESTS, labelNames: ['route', 'method', 'status'] as const, registers: [prom] });
  const histogram = new Histogram({ ...LATENCY, labelNames: ['route', 'method'] as const, registers: [prom] });
  const ours = new Registry();
  const metrics = createRequestMetrics({ requests: REQUESTS, latency: LATENCY });
  ours.registerMetric(metrics.requests as unknown as Metric);
  ours.registerMetric(metrics.latency as unknown as Metric);
  const observe = (route: string, method: string, status: number, seconds: number) => {
    counter.inc({ route, method, status: String(status) });
    histogram.observe({ route, method }, seconds);
    metrics.observe(route, method, status, seconds);
  };
  return { prom, ours, observe };
}

describe('request metrics without prom-client on the request path', () => {
  it('read as prom-client reads the same requests: text, JSON and a cluster aggregation', async () => {
    const { prom, ours, observe } = registries();
    expect(await ours.metrics()).toBe(await prom.metrics());
    for (const [index, request] of OBSERVED.entries()) {
      observe(...request);
      // Scrapes between requests too: series first seen later come later, counts keep adding up.
      if (index % 3 === 2) expect(await ours.metrics()).toBe(await prom.metrics());
    }
    expect(await ours.metrics()).toBe(await prom.metrics());
    const ourJson = await ours.getMetricsAsJSON();
    const promJson = await prom.getMetricsAsJSON();
    expect(JSON.stringify(ourJson)).toBe(JSON.stringify(promJson));
    // Two workers' figures summed by the primary (prom-client's cluster aggregation, docs/adr/0009-workers-under-one-primary.md).
    const aggregated = (json: typeof ourJson) =>
      AggregatorRegistry.aggregate([JSON.parse(JSON.stringify(json)), JSON.parse(JSON.stringify(json))]).metrics();
    expect(await aggregated(ourJson)).toBe(await aggregated(promJson));
    expect(await ours.metrics()).toContain('ugs_http_requests_total{route="/api/user",method="GET",status="200"} 3');
  });

  it('merge into one registry with other metrics as prom-client metrics do', async () => {
    const { prom, ours, observe } = registries();
    for (const request of OBSERVED) observe(...request);
    const other = new Registry();
    new Counter({ name: 'ugs_other_total', help: 'Another.', registers: [other] }).inc(3);
    expect(await Registry.merge([ours, other]).metrics()).toBe(await Registry.merge([prom, other]).metrics());
  });
});
