// Rate limits per API token (token bucket) over HTTP: the headers, 429, per-token limits and their
// admin API, on a limiter whose clock the test moves by hand (no sleeping, no timing).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalRateLimiter } from '../../src/rate-limit/rate-limiter.js';
import { inject, type ApiResponse } from '../support/http-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { ADMIN, adminCall } from './admin-helpers.js';
import { expectError, expectSuccess, expectUnchanged } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { issueApiToken } from '../support/api-token-issuer.js';
import { type As } from '../support/callers.js';
import { VERIFY_PATH } from '../support/user-group-api.js';

/** The server's default in these tests: a bucket of 4 that refills 2 a second. */
const DEFAULT_POLICY = { perSecond: 2, burst: 4 };
const RATE_LIMIT_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy'];

/** The RateLimit headers of a response, by name. */
const rateLimitHeaders = (res: ApiResponse) =>
  Object.fromEntries(RATE_LIMIT_HEADERS.map((name) => [name, res.headers[name]]));

describe('rate limits per API token', () => {
  let t: TestApp;
  const clock = { ms: 0 };
  const advance = (ms: number) => {
    clock.ms += ms;
  };
  /** An admin token whose own limit no test here reaches: it manages the others. */
  let operator: string;

  beforeAll(async () => {
    t = await createTestApp({
      rateLimit: { limiter: createLocalRateLimiter(() => clock.ms), defaultPolicy: DEFAULT_POLICY },
    });
    operator = await issueWithLimit(
      { name: uniqueId('operator'), scope: 'admin', rate_limit: { per_second: 1_000_000, burst: 1_000_000 } },
      t.tokens.default.Customer.admin,
    );
  });
  afterAll(() => t?.close());

  /** Creates an API token through the admin API; returns its secret. */
  async function issueWithLimit(body: Record<string, unknown>, token = operator): Promise<string> {
    return expectSuccess(await adminCall(t, { method: 'POST', path: ADMIN.apiTokens, body, token })).api_token.token;
  }

  /** A fresh token on the server's default: a bucket of its own, full. */
  const freshToken = async (scope: 'read' | 'admin' = 'admin') => (await issueApiToken(t, { scope })).secret;

  /** A cheap authenticated request that succeeds for an admin token. */
  const listSchemas = (token: string) => adminCall(t, { path: ADMIN.schemas, token });

  describe('on the default limit', () => {
    it('admits the burst, counting down in RateLimit-Remaining, then answers 429 rate_limited with Retry-After', async () => {
      const token = await freshToken();
      const seen = [];
      for (let i = 0; i < 4; i += 1) {
        const res = await listSchemas(token);
        expectSuccess(res);
        seen.push(rateLimitHeaders(res));
      }
      // Limit: the bucket's size; Reset: seconds until it is full again (1 token takes 0.5 s).
      expect(seen).toEqual([
        {
          'ratelimit-limit': '4',
          'ratelimit-remaining': '3',
          'ratelimit-reset': '1',
          'ratelimit-policy': '2;w=1;burst=4',
        },
        {
          'ratelimit-limit': '4',
          'ratelimit-remaining': '2',
          'ratelimit-reset': '1',
          'ratelimit-policy': '2;w=1;burst=4',
        },
        {
          'ratelimit-limit': '4',
          'ratelimit-remaining': '1',
          'ratelimit-reset': '2',
          'ratelimit-policy': '2;w=1;burst=4',
        },
        {
          'ratelimit-limit': '4',
          'ratelimit-remaining': '0',
          'ratelimit-reset': '2',
          'ratelimit-policy': '2;w=1;burst=4',
        },
      ]);

      const refused = await listSchemas(token);
      expectError(refused, 429, 'rate_limited', null);
      expect(refused.body.error.message).toBe(
        'This API token may make 2 requests a second, up to 4 at once; retry in 1 s.',
      );
      expect(refused.headers['retry-after']).toBe('1');
      expect(rateLimitHeaders(refused)).toEqual({
        'ratelimit-limit': '4',
        'ratelimit-remaining': '0',
        'ratelimit-reset': '2',
        'ratelimit-policy': '2;w=1;burst=4',
      });
      expect(refused.headers['cache-control']).toBe('no-store');
    });

    it('refills at the rate: one token per half second, never more than the burst', async () => {
      const token = await freshToken();
      for (let i = 0; i < 4; i += 1) expectSuccess(await listSchemas(token));
      advance(499);
      expectError(await listSchemas(token), 429, 'rate_limited', null);
      advance(1);
      const refilled = await listSchemas(token);
      expectSuccess(refilled);
      expect(refilled.headers['ratelimit-remaining']).toBe('0');
      expectError(await listSchemas(token), 429, 'rate_limited', null);

      advance(60_000);
      const statuses = [];
      for (let i = 0; i < 6; i += 1) statuses.push((await listSchemas(token)).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    });

    it('counts every authenticated request, refused ones too (403, 400, 404)', async () => {
      const token = await freshToken('read');
      const refusals: Array<[ApiResponse, number, string]> = [
        [await adminCall(t, { path: ADMIN.schemas, token }), 403, 'insufficient_scope'],
        [
          await inject(t.app, { method: 'POST', path: VERIFY_PATH, token, body: { token: 'x', tokn: 'x' } }),
          400,
          'unknown_field',
        ],
        [
          await inject(t.app, { method: 'POST', path: VERIFY_PATH, token, body: { token: `ugt_${'0'.repeat(64)}` } }),
          404,
          'user_group_not_found',
        ],
        [await adminCall(t, { method: 'DELETE', path: `${ADMIN.apiTokens}/1`, token }), 403, 'insufficient_scope'],
      ];
      refusals.forEach(([res, status, code], index) => {
        expectError(res, status, code);
        expect(res.headers['ratelimit-remaining']).toBe(String(3 - index));
      });
      expectError(
        await inject(t.app, { method: 'POST', path: VERIFY_PATH, token, body: { token: `ugt_${'0'.repeat(64)}` } }),
        429,
        'rate_limited',
        null,
      );
    });

    it('keeps one bucket per API token, also within one tenant', async () => {
      const [drained, other] = [await freshToken(), await freshToken()];
      for (let i = 0; i < 4; i += 1) expectSuccess(await listSchemas(drained));
      expectError(await listSchemas(drained), 429, 'rate_limited', null);
      const res = await listSchemas(other);
      expectSuccess(res);
      expect(res.headers['ratelimit-remaining']).toBe('3');
    });

    it('takes nothing from a request that is not authenticated, and sends it no RateLimit headers', async () => {
      for (const token of [undefined, `ugs_live_${'0'.repeat(64)}`]) {
        const res = await inject(t.app, { method: 'GET', path: ADMIN.schemas, ...(token ? { token } : {}) });
        expect(res.status).toBe(401);
        for (const name of RATE_LIMIT_HEADERS) expect(res.headers[name]).toBeUndefined();
      }
    });
  });

  describe('a token with a limit of its own', () => {
    it('is held to it rather than to the default, lower or higher', async () => {
      const strict = await issueWithLimit({
        name: uniqueId('strict'),
        scope: 'admin',
        rate_limit: { per_second: 1, burst: 2 },
      });
      const statuses = [];
      for (let i = 0; i < 3; i += 1) statuses.push(await listSchemas(strict));
      expect(statuses.map((res) => res.status)).toEqual([200, 200, 429]);
      expect(rateLimitHeaders(statuses[2]!)).toEqual({
        'ratelimit-limit': '2',
        'ratelimit-remaining': '0',
        'ratelimit-reset': '2',
        'ratelimit-policy': '1;w=1;burst=2',
      });

      const generous = await issueWithLimit({
        name: uniqueId('generous'),
        scope: 'admin',
        rate_limit: { per_second: 10, burst: 10 },
      });
      for (let i = 0; i < 10; i += 1) expectSuccess(await listSchemas(generous));
      expectError(await listSchemas(generous), 429, 'rate_limited', null);
    });

    it('states a rate below one a second per minute, and waits as long as one token takes', async () => {
      const slow = await issueWithLimit({
        name: uniqueId('slow'),
        scope: 'admin',
        rate_limit: { per_second: 0.5, burst: 1 },
      });
      expectSuccess(await listSchemas(slow));
      const refused = await listSchemas(slow);
      expectError(refused, 429, 'rate_limited', null);
      expect(refused.headers['retry-after']).toBe('2');
      expect(refused.headers['ratelimit-policy']).toBe('30;w=60;burst=1');
      expect(refused.body.error.message).toBe(
        'This API token may make 30 requests a minute, up to 1 at once; retry in 2 s.',
      );
    });

    it('applies a change from the token’s very next request, and null puts it back on the default', async () => {
      const issued = await issueApiToken(t, { scope: 'admin' });
      for (let i = 0; i < 4; i += 1) expectSuccess(await listSchemas(issued.secret));
      expectError(await listSchemas(issued.secret), 429, 'rate_limited', null);

      const patch = (rateLimit: unknown) =>
        adminCall(t, {
          method: 'PATCH',
          path: `${ADMIN.apiTokens}/${issued.record.id}`,
          body: { rate_limit: rateLimit },
          token: operator,
        });
      expectSuccess(await patch({ per_second: 1, burst: 6 }));
      // A larger bucket is not a refill: the tokens come at the new rate.
      const stillEmpty = await listSchemas(issued.secret);
      expectError(stillEmpty, 429, 'rate_limited', null);
      expect(rateLimitHeaders(stillEmpty)).toMatchObject({
        'ratelimit-limit': '6',
        'ratelimit-policy': '1;w=1;burst=6',
        'ratelimit-reset': '6',
      });
      advance(1_000);
      expectSuccess(await listSchemas(issued.secret));

      expectSuccess(await patch(null));
      advance(60_000);
      expect((await listSchemas(issued.secret)).headers).toMatchObject({
        'ratelimit-limit': '4',
        'ratelimit-remaining': '3',
        'ratelimit-policy': '2;w=1;burst=4',
      });
    });
  });

  describe('the admin API', () => {
    const patchPath = (id: number | string) => `${ADMIN.apiTokens}/${id}`;
    const patch = (id: number | string, body: unknown, as?: As) =>
      adminCall(t, { method: 'PATCH', path: patchPath(id), body, ...(as ? { as } : { token: operator }) });
    const auditEvents = async (action: string) =>
      expectSuccess(await adminCall(t, { path: ADMIN.auditEvents, query: { action, limit: 1000 }, token: operator }))
        .audit_events as Array<Record<string, unknown>>;

    it('creates a token with a limit of its own, shows it there and in the list, and audits it', async () => {
      const name = uniqueId('limited');
      const created = expectSuccess(
        await adminCall(t, {
          method: 'POST',
          path: ADMIN.apiTokens,
          token: operator,
          body: { name, scope: 'write', rate_limit: { per_second: 2.5, burst: 7 } },
        }),
      ).api_token;
      expect(created).toMatchObject({ name, scope: 'write', rate_limit: { per_second: 2.5, burst: 7 } });
      const listed = expectSuccess(await adminCall(t, { path: ADMIN.apiTokens, token: operator })).api_tokens;
      expect(listed.find((token: { id: number }) => token.id === created.id)).toMatchObject({
        rate_limit: { per_second: 2.5, burst: 7 },
      });
      const defaulted = expectSuccess(
        await adminCall(t, {
          method: 'POST',
          path: ADMIN.apiTokens,
          token: operator,
          body: { name: uniqueId('plain'), scope: 'read', rate_limit: null },
        }),
      ).api_token;
      expect(defaulted.rate_limit).toBeNull();

      const [event] = (await auditEvents('api_token.created')).filter(
        (audited) => (audited.changes as { id: { after: number } }).id.after === created.id,
      );
      expect(event?.changes).toMatchObject({ rate_limit: { before: null, after: { per_second: 2.5, burst: 7 } } });
    });

    it('PATCH sets, changes and clears the limit, each change audited with before and after and its request id', async () => {
      const issued = await issueApiToken(t, { scope: 'read' });
      const requestIds = [uniqueId('set'), uniqueId('change'), uniqueId('clear')];
      const update = async (rateLimit: unknown, requestId: string) => {
        const res = await adminCall(t, {
          method: 'PATCH',
          path: patchPath(issued.record.id),
          body: { rate_limit: rateLimit },
          token: operator,
          requestId,
        });
        return expectSuccess(res).api_token;
      };
      const wire = {
        id: issued.record.id,
        name: issued.record.name,
        scope: 'read',
        environment: 'Customer',
        created_at: issued.record.createdAt,
        last_used_at: null,
      };

      expect(await update({ per_second: 5, burst: 10 }, requestIds[0]!)).toStrictEqual({
        ...wire,
        rate_limit: { per_second: 5, burst: 10 },
      });
      expect(await update({ per_second: 50, burst: 100 }, requestIds[1]!)).toStrictEqual({
        ...wire,
        rate_limit: { per_second: 50, burst: 100 },
      });
      expect(await update(null, requestIds[2]!)).toStrictEqual({ ...wire, rate_limit: null });

      const events = (await auditEvents('api_token.updated'))
        .filter((event) => requestIds.includes(event.request_id as string))
        .reverse();
      expect(events).toMatchObject(
        requestIds.map((request_id) => ({
          action: 'api_token.updated',
          environment: 'Customer',
          request_id,
          team_id: null,
          provided_id: null,
        })),
      );
      expect(events.map((event) => event.changes)).toStrictEqual([
        { rate_limit: { before: null, after: { per_second: 5, burst: 10 } } },
        { rate_limit: { before: { per_second: 5, burst: 10 }, after: { per_second: 50, burst: 100 } } },
        { rate_limit: { before: { per_second: 50, burst: 100 }, after: null } },
      ]);
    });

    it('PATCH with the value the token has already changes nothing and audits nothing', async () => {
      const issued = await issueApiToken(t, { scope: 'read' });
      expectSuccess(await patch(issued.record.id, { rate_limit: { per_second: 3, burst: 3 } }));
      const same = await expectUnchanged(t, () => patch(issued.record.id, { rate_limit: { per_second: 3, burst: 3 } }));
      expect(expectSuccess(same).api_token.rate_limit).toEqual({ per_second: 3, burst: 3 });
      const plain = await issueApiToken(t, { scope: 'read' });
      expect(
        expectSuccess(await expectUnchanged(t, () => patch(plain.record.id, { rate_limit: null }))).api_token
          .rate_limit,
      ).toBeNull();
    });

    const INVALID: Array<[string, unknown, string, string]> = [
      ['per_second 0', { per_second: 0, burst: 1 }, 'invalid_field', 'rate_limit'],
      ['a negative per_second', { per_second: -1, burst: 1 }, 'invalid_field', 'rate_limit'],
      ['per_second below 0.001', { per_second: 0.0009, burst: 1 }, 'invalid_field', 'rate_limit'],
      ['per_second above a million', { per_second: 1_000_001, burst: 1 }, 'invalid_field', 'rate_limit'],
      ['per_second as a string', { per_second: '5', burst: 1 }, 'invalid_field', 'rate_limit'],
      ['burst 0', { per_second: 1, burst: 0 }, 'invalid_field', 'rate_limit'],
      ['a fractional burst', { per_second: 1, burst: 1.5 }, 'invalid_field', 'rate_limit'],
      ['burst above a million', { per_second: 1, burst: 1_000_001 }, 'invalid_field', 'rate_limit'],
      ['no burst', { per_second: 1 }, 'invalid_field', 'rate_limit'],
      ['no per_second', { burst: 1 }, 'invalid_field', 'rate_limit'],
      ['an unknown key inside', { per_second: 1, burst: 1, window: 60 }, 'invalid_field', 'rate_limit'],
      ['a rate as text', '5/s', 'invalid_field', 'rate_limit'],
      ['a number', 5, 'invalid_field', 'rate_limit'],
    ];

    it.each(INVALID)(
      'POST refuses %s: 400 %s naming %s, and creates nothing',
      async (_label, rateLimit, code, field) => {
        const res = await expectUnchanged(t, () =>
          adminCall(t, {
            method: 'POST',
            path: ADMIN.apiTokens,
            token: operator,
            body: { name: 'n', scope: 'read', rate_limit: rateLimit },
          }),
        );
        expectError(res, 400, code, field);
      },
    );

    it.each(INVALID)(
      'PATCH refuses %s: 400 %s naming %s, and changes nothing',
      async (_label, rateLimit, code, field) => {
        const issued = await issueApiToken(t, { scope: 'read' });
        expectError(
          await expectUnchanged(t, () => patch(issued.record.id, { rate_limit: rateLimit })),
          400,
          code,
          field,
        );
      },
    );

    it.each<[string, unknown, string, string]>([
      ['an empty body', {}, 'missing_field', 'rate_limit'],
      ['another field', { rate_limit: null, name: 'renamed' }, 'unknown_field', 'name'],
      ['a scope change', { rate_limit: null, scope: 'admin' }, 'unknown_field', 'scope'],
    ])('PATCH refuses %s: 400 %s naming %s', async (_label, body, code, field) => {
      const issued = await issueApiToken(t, { scope: 'read' });
      expectError(await expectUnchanged(t, () => patch(issued.record.id, body)), 400, code, field);
    });

    it.each<[string, () => Promise<number>, As | undefined, number, string]>([
      ['an id never issued', async () => 999_999_999, undefined, 404, 'api_token_not_found'],
      [
        'a revoked token',
        async () => {
          const { record } = await issueApiToken(t);
          expectSuccess(await adminCall(t, { method: 'DELETE', path: patchPath(record.id), token: operator }));
          return record.id;
        },
        undefined,
        404,
        'api_token_not_found',
      ],
      [
        "another workspace's token",
        async () => (await issueApiToken(t, { as: { workspace: 'other' } })).record.id,
        undefined,
        404,
        'api_token_not_found',
      ],
      [
        'a token, asked by a write token',
        async () => (await issueApiToken(t)).record.id,
        { scope: 'write' },
        403,
        'insufficient_scope',
      ],
    ])('PATCH of %s is %d %s, and changes nothing', async (_label, idOf, as, status, code) => {
      const id = await idOf();
      expectError(
        await expectUnchanged(t, () => patch(id, { rate_limit: { per_second: 1, burst: 1 } }, as)),
        status,
        code,
        null,
      );
    });
  });
});

describe('with rate limiting off', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ rateLimit: 'off' });
  });
  afterAll(() => t?.close());

  it('sends no RateLimit header, on successes and failures alike, and never answers 429', async () => {
    const token = t.tokens.default.Customer.admin;
    const limited = await issueApiToken(t, { scope: 'admin' });
    expectSuccess(
      await adminCall(t, {
        method: 'PATCH',
        path: `${ADMIN.apiTokens}/${limited.record.id}`,
        body: { rate_limit: { per_second: 1, burst: 1 } },
      }),
    );
    for (let i = 0; i < 20; i += 1) {
      for (const res of [
        await adminCall(t, { path: ADMIN.schemas, token }),
        await adminCall(t, { path: ADMIN.schemas, token: limited.secret }),
        await adminCall(t, { path: ADMIN.schemas, as: { scope: 'read' } }),
      ]) {
        expect(res.status).not.toBe(429);
        for (const name of [...RATE_LIMIT_HEADERS, 'retry-after']) expect(res.headers[name]).toBeUndefined();
      }
    }
  });
});
