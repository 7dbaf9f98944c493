// GET /metrics under `ugs serve --workers 2`: whichever worker a scrape reaches, it answers
// for the whole server, so every request is counted once and no counter ever goes back.
import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sample } from '../support/prometheus-text.js';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { childPids, waitFor } from './helpers.js';
import { call } from '../support/http-client.js';

const WORKERS = 2;

/** GET /metrics as text, on a connection of its own (so the scrapes too reach both workers). */
function scrape(server: ServeProcess): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    get(`${server.baseUrl}/metrics`, { agent: false }, (incoming) => {
      let text = '';
      incoming.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, text }));
    }).on('error', reject);
  });
}
const SCRAPES = 20;
/** Requests between two scrapes: odd, so that they do not fall evenly on the two workers. */
const REQUESTS_BETWEEN = 3;

describe('/metrics with --workers 2', () => {
  let db: TestDatabase;
  let server: ServeProcess;

  beforeAll(async () => {
    db = await createTestDatabase('sqlite');
    server = await startServeProcess(db, { args: ['--workers', String(WORKERS)] });
    await waitFor('both workers', 20_000, async () => (childPids(server.pid).length === WORKERS ? true : undefined));
  });

  afterAll(async () => {
    await stopAllServeProcesses();
    await db?.drop();
  });

  it(`${SCRAPES} scrapes are monotonic and count every request once`, async () => {
    const healthz = { route: '/healthz', method: 'GET', status: '200' };
    const scrapes = { route: '/metrics', method: 'GET', status: '200' };
    // Every request on a connection of its own: the cluster hands connections to the workers in turn.
    const baseline = sample((await scrape(server)).text, 'ugs_http_requests_total', healthz) ?? 0;
    let sent = 0;
    let previousScrapes = -1;
    for (let round = 1; round <= SCRAPES; round += 1) {
      for (let i = 0; i < REQUESTS_BETWEEN; i += 1) {
        expect((await call(server, { method: 'GET', path: '/healthz' })).status).toBe(200);
        sent += 1;
      }
      const response = await scrape(server);
      expect(response.status, response.text).toBe(200);
      expect(sample(response.text, 'ugs_http_requests_total', healthz)).toBe(baseline + sent);
      // The scrapes answered before this one (this one is counted once answered), never fewer.
      const answered = sample(response.text, 'ugs_http_requests_total', scrapes) ?? 0;
      expect(answered).toBeGreaterThan(previousScrapes);
      previousScrapes = answered;
    }
    expect(previousScrapes).toBeGreaterThanOrEqual(SCRAPES);
  }, 120_000);
});
