import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from '../support/http-client.js';
import { sample } from '../support/prometheus-text.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('GET /metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('counts requests by route pattern, method and status, with latency histograms', async () => {
    const token = t.tokens.default.Customer.write;
    for (const id of ['m1', 'm2'])
      await inject(t.app, { method: 'GET', path: '/api/user', token, body: { user_group_id: id } });
    await inject(t.app, { method: 'PUT', path: '/api/user', token, body: { user_group_id: 'missing' } });
    await inject(t.app, { method: 'GET', path: '/no/such/path/123' });
    await inject(t.app, { method: 'GET', path: '/healthz' });

    const response = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    const text = response.body;
    expect(sample(text, 'ugs_http_requests_total', { route: '/api/user', method: 'GET', status: '200' })).toBe(2);
    expect(sample(text, 'ugs_http_requests_total', { route: '/api/user', method: 'PUT', status: '404' })).toBe(1);
    expect(sample(text, 'ugs_http_requests_total', { route: '/healthz', method: 'GET', status: '200' })).toBe(1);
    // Unknown paths share one label, so clients cannot blow up the label set.
    expect(sample(text, 'ugs_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' })).toBe(1);
    expect(text).not.toContain('/no/such/path');
    expect(sample(text, 'ugs_http_request_duration_seconds_count', { route: '/api/user', method: 'GET' })).toBe(2);
    expect(text).toMatch(/^ugs_process_resident_memory_bytes \d+/m);
  });

  it('reports the database pool where the engine has one', async () => {
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    if (t.db.engine === 'postgres') {
      expect(sample(text, 'ugs_db_pool_connections', { state: 'total' })).toBeGreaterThan(0);
    } else {
      expect(text).not.toMatch(/^ugs_db_pool_connections\{/m);
    }
  });
});
