import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tenant } from '../../src/domain/tenancy.js';
import { createLocalRateLimiter } from '../../src/rate-limit/rate-limiter.js';
import { inject, type ApiRequest, type ApiResponse } from '../support/http-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import {
  holdWriteLock,
  openSecondInstance,
  unusedUserGroupToken,
  type DatabaseReader,
  useTestAppWithReader,
} from '../security/helpers.js';
import { expectError } from '../support/error-envelope.js';
import { issueApiToken } from '../support/api-token-issuer.js';
import { makeGroup } from '../support/group-maker.js';

interface GroupRef {
  id: string;
  token: string;
}

// The /api/user operations that write, each aimed at a group of its own.
const WRITES: Record<string, (group: GroupRef) => Omit<ApiRequest, 'token'>> = {
  'GET get-or-create': (g) => ({ method: 'GET', path: '/api/user', body: { user_group_id: `${g.id}-new` } }),
  'PUT update': (g) => ({ method: 'PUT', path: '/api/user', body: { user_group_id: g.id, name: 'renamed' } }),
  'POST rotate': (g) => ({ method: 'POST', path: '/api/user', body: { current_token: g.token } }),
  'DELETE delete': (g) => ({ method: 'DELETE', path: '/api/user', body: { user_group_id: g.id } }),
};
const READS: Record<string, (group: GroupRef) => Omit<ApiRequest, 'token'>> = {
  'GET of an existing group': (g) => ({ method: 'GET', path: '/api/user', body: { user_group_id: g.id } }),
  'POST verify': (g) => ({ method: 'POST', path: '/api/user/verify', body: { token: g.token } }),
};
const OPERATIONS: Record<string, (group: GroupRef) => Omit<ApiRequest, 'token'>> = {
  ...WRITES,
  'POST verify': READS['POST verify']!,
};

/** A Retry-After of whole seconds, at most `max`. */
function expectRetryAfter(response: ApiResponse, max: number): void {
  const value = String(response.headers['retry-after']);
  expect(value).toMatch(/^\d+$/);
  expect(Number(value)).toBeGreaterThanOrEqual(1);
  expect(Number(value)).toBeLessThanOrEqual(max);
}

// A bucket of 3 that refills at 3 a minute, on a clock that stands still: no refill can blur the count.
describe('rate limiting at 3 requests a minute, burst 3, per API token', () => {
  let t: TestApp;
  let reader: DatabaseReader;
  let tenant: Tenant;
  const call = (req: ApiRequest) => inject(t.app, req);
  const freshToken = async () => (await issueApiToken(t, { scope: 'write', name: 'extra-write' })).secret;
  const ghost = (): GroupRef => ({ id: `rl-${randomUUID()}`, token: unusedUserGroupToken() });

  const fixture = useTestAppWithReader({
    rateLimit: { limiter: createLocalRateLimiter(() => 0), defaultPolicy: { perSecond: 3 / 60, burst: 3 } },
  });
  beforeAll(() => ({ t, reader, tenant } = fixture));

  it.each(Object.keys(OPERATIONS))(
    'answers the 4th %s of one token with 429 and Retry-After, changing nothing',
    async (name) => {
      const operation = OPERATIONS[name]!;
      const token = await freshToken();
      for (let i = 0; i < 3; i += 1) expect((await call({ ...operation(ghost()), token })).status).not.toBe(429);

      const before = await reader.snapshot(tenant);
      const limited = await call({ ...operation(ghost()), token });
      expectError(limited, 429, 'rate_limited');
      expectRetryAfter(limited, 60);
      // The next token comes in 60 s / 3.
      expect(limited.headers['retry-after']).toBe('20');
      expect(await reader.snapshot(tenant)).toEqual(before);

      // Another token of the same tenant still has its whole budget.
      const other = await call({ ...operation(ghost()), token: await freshToken() });
      expect(other.status).not.toBe(429);
      expect(other.headers['retry-after']).toBeUndefined();
    },
  );

  it('counts every operation of a token against one budget', async () => {
    const token = await freshToken();
    const [first, second, third, fourth] = Object.values(OPERATIONS).map((operation) => operation(ghost()));
    for (const request of [first!, second!, third!]) expect((await call({ ...request, token })).status).not.toBe(429);
    expectError(await call({ ...fourth!, token }), 429, 'rate_limited');
  });
});

describe('a database locked by another connection', () => {
  let t: TestApp;
  let reader: DatabaseReader;
  let tenant: Tenant;

  const fixture = useTestAppWithReader();
  beforeAll(() => ({ t, reader, tenant } = fixture));

  it('is ready while healthy', async () => {
    const ready = await inject(t.app, { method: 'GET', path: '/readyz' });
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ok' });
  });

  it(
    'answers a create with 503 and Retry-After once the default lock wait runs out, then recovers',
    { timeout: 20_000 },
    async () => {
      const token = t.tokens.default.Customer.write;
      const request = { method: 'GET', path: '/api/user', token, body: { user_group_id: 'created-after-the-lock' } };
      // The token's first use records last_used_at, a write; make it before the lock.
      expect((await inject(t.app, { ...request, body: { user_group_id: 'warm-up' } })).status).toBe(200);

      const release = await holdWriteLock(t.db);
      let locked: ApiResponse;
      const started = Date.now();
      try {
        locked = await inject(t.app, request);
      } finally {
        await release();
      }
      // SQLite's busy timeout and PostgreSQL's statement timeout are 5 s by default.
      expect(Date.now() - started).toBeLessThan(8_000);
      expectError(locked, 503, 'unavailable');
      expectRetryAfter(locked, 60);
      expect(await reader.countGroups(tenant, 'created-after-the-lock')).toBe(0);

      const recovered = await inject(t.app, request);
      expect(recovered.status).toBe(200);
      expect(recovered.body.new_user_group).toBe(true);
    },
  );

  describe('on an instance that waits 100 ms for a lock', () => {
    let instance: Awaited<ReturnType<typeof openSecondInstance>>;
    const targets: Record<string, GroupRef> = {};
    const call = (req: Omit<ApiRequest, 'token'>, token = t.tokens.default.Customer.write) =>
      inject(instance.app, { ...req, token });

    beforeAll(async () => {
      instance = await openSecondInstance(t.db, 100);
      for (const name of [...Object.keys(WRITES), ...Object.keys(READS)]) {
        const group = await makeGroup(
          { target: (req) => inject(instance.app, req), token: t.tokens.default.Customer.write },
          {
            id: `locked-${name}`,
          },
        );
        targets[name] = { id: group.provided_id, token: group.token };
      }
    });

    afterAll(() => instance.close());

    it('answers every write with 503 and Retry-After, serves reads, changes nothing, and recovers by itself', async () => {
      const before = await reader.snapshot(tenant);
      const release = await holdWriteLock(t.db);
      try {
        for (const [name, operation] of Object.entries(WRITES)) {
          const response = await call(operation(targets[name]!));
          expectError(response, 503, 'unavailable');
          expectRetryAfter(response, 60);
        }
        // Readers are not blocked by a writer (SQLite's WAL; PostgreSQL's MVCC): the hot path keeps working.
        for (const [name, operation] of Object.entries(READS)) {
          const response = await call(operation(targets[name]!));
          expect(response.status, name).toBe(200);
          expect(response.body.user_group.provided_id, name).toBe(targets[name]!.id);
        }
        expect((await call({ method: 'GET', path: '/healthz' })).status).toBe(200);
      } finally {
        await release();
      }
      expect(await reader.snapshot(tenant)).toEqual(before);

      for (const [name, operation] of Object.entries(WRITES)) {
        expect((await call(operation(targets[name]!))).status, name).toBe(200);
      }
    });
  });

  it('is not ready, with 503 and Retry-After, once its database is gone, while the process stays alive', async () => {
    const closing = await createTestApp();
    try {
      await closing.runtime.store.close();
      const ready = await inject(closing.app, { method: 'GET', path: '/readyz' });
      expectError(ready, 503, 'unavailable');
      expectRetryAfter(ready, 60);
      expect((await inject(closing.app, { method: 'GET', path: '/healthz' })).status).toBe(200);
    } finally {
      await closing.close();
    }
  });
});
