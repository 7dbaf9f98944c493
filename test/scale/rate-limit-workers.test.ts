// `ugs serve --workers 2` with a small rate limit: the buckets live in the cluster primary, so the
// server as a whole admits what one bucket allows, not one bucket's worth per worker.
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiResponse } from '../support/http-client.js';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../support/test-database.js';
import { call } from '../support/http-client.js';

const RATE_PER_SECOND = 5;
const BURST = 10;
const CONNECTIONS = 40;
const REQUESTS_PER_CONNECTION = 10;

describe(`ugs serve --workers 2 --rate-limit ${RATE_PER_SECOND}/s --rate-limit-burst ${BURST} on ${TEST_ENGINE}`, () => {
  let db: TestDatabase;
  let server: ServeProcess;
  let admin: string;

  beforeAll(async () => {
    db = await createTestDatabase(TEST_ENGINE);
    server = await startServeProcess(db, {
      args: ['--workers', '2'],
      env: { UGS_RATE_LIMIT: `${RATE_PER_SECOND}/s`, UGS_RATE_LIMIT_BURST: String(BURST) },
    });
    admin = server.adminTokens().Customer;
  });

  afterAll(async () => {
    await stopAllServeProcesses();
    await db?.drop();
  });

  const createToken = async (): Promise<{ id: number; token: string }> => {
    const created = await call(server, {
      method: 'POST',
      path: '/api/admin/api_tokens',
      token: admin,
      body: { name: `load ${Date.now()}`, scope: 'read' },
    });
    expect(created.status, created.raw).toBe(200);
    return created.body.api_token;
  };

  /** Many connections at once (each request on a new one, so the primary spreads them over both workers). */
  async function flood(token: string): Promise<{ responses: ApiResponse[]; elapsedSeconds: number }> {
    const started = performance.now();
    const connections = Array.from({ length: CONNECTIONS }, async () => {
      const answers: ApiResponse[] = [];
      for (let i = 0; i < REQUESTS_PER_CONNECTION; i += 1) {
        answers.push(
          await call(server, {
            method: 'POST',
            path: '/api/user/verify',
            token,
            body: { token: `ugt_${'0'.repeat(64)}` },
          }),
        );
      }
      return answers;
    });
    const responses = (await Promise.all(connections)).flat();
    return { responses, elapsedSeconds: (performance.now() - started) / 1000 };
  }

  it(
    'admits at most burst + rate × elapsed requests of one token across both workers, refusing the rest with 429',
    { timeout: 60_000 },
    async () => {
      const { token } = await createToken();
      const { responses, elapsedSeconds } = await flood(token);

      const admitted = responses.filter((response) => response.status !== 429);
      const refused = responses.filter((response) => response.status === 429);
      expect(admitted.length + refused.length).toBe(CONNECTIONS * REQUESTS_PER_CONNECTION);
      // Admitted requests are answered on their merits: the group does not exist.
      for (const response of admitted) expect(response.body?.error?.code, response.raw).toBe('user_group_not_found');
      // The bucket starts full; it gains `rate` tokens a second between the first request and the last answer. Two
      // buckets, one per worker, would admit twice the burst alone.
      expect(admitted.length).toBeGreaterThanOrEqual(BURST);
      expect(admitted.length).toBeLessThanOrEqual(Math.floor(BURST + RATE_PER_SECOND * elapsedSeconds));

      for (const response of refused) {
        expect(response.body.error.code).toBe('rate_limited');
        expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(response.headers).toMatchObject({
          'ratelimit-limit': String(BURST),
          'ratelimit-remaining': '0',
          'ratelimit-policy': `${RATE_PER_SECOND};w=1;burst=${BURST}`,
        });
      }
    },
  );

  it(
    'gives every API token a bucket of its own, and applies a changed limit in every worker from the next request',
    { timeout: 60_000 },
    async () => {
      const { id, token } = await createToken();
      const first = await call(server, {
        method: 'POST',
        path: '/api/user/verify',
        token,
        body: { token: `ugt_${'0'.repeat(64)}` },
      });
      expect(first.headers).toMatchObject({
        'ratelimit-limit': String(BURST),
        'ratelimit-remaining': String(BURST - 1),
      });

      const updated = await call(server, {
        method: 'PATCH',
        path: `/api/admin/api_tokens/${id}`,
        token: admin,
        body: { rate_limit: { per_second: 1_000_000, burst: 1_000_000 } },
      });
      expect(updated.status, updated.raw).toBe(200);
      const { responses } = await flood(token);
      for (const response of responses) {
        expect(response.status, response.raw).toBe(404);
        expect(response.headers['ratelimit-limit']).toBe('1000000');
      }
    },
  );
});
