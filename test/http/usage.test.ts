import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalRateLimiter } from '../../src/rate-limit/rate-limiter.js';
import { inject, send, type ApiResponse } from '../support/http-client.js';
import { sample } from '../support/prometheus-text.js';
import { uniqueId } from '../support/unique-id.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { ADMIN, adminCall, adminOk } from './admin-helpers.js';
import { expectError, expectSuccess } from './helpers.js';
import { apiToken, type As } from '../support/callers.js';
import { issueApiToken } from '../support/api-token-issuer.js';
import { makeGroup, type GroupInput } from '../support/group-maker.js';
import { USER_PATH, VERIFY_PATH } from '../support/user-group-api.js';

/** A new group (the default workspace's Customer environment unless `as` says otherwise): its id, token and team id. */
async function seedGroup(t: TestApp, input: GroupInput = {}): Promise<{ id: string; token: string; teamId: number }> {
  const group = await makeGroup(t, input);
  return { id: group.provided_id, token: group.token, teamId: group.team_id };
}

/*
 * Usage per group and per UTC day (docs/api.md#usage-per-group): what the hot path counts, and the two admin reads.
 * The app counts as `ugs serve` does; the flush interval is long, so each test writes the counts
 * itself (runtime.usage.flush()) and sees exactly what it asked for.
 */

const USAGE = '/api/admin/usage';
const TOP = '/api/admin/usage/top';
const today = () => new Date().toISOString().slice(0, 10);

describe('usage per group', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ usage: { flushMs: 600_000 } });
  });
  afterAll(async () => {
    await t?.close();
  });

  const call = (method: string, path: string, body: unknown, as: As = { scope: 'read' }) =>
    inject(t.app, { method, path, token: apiToken(t, as), body });
  const flush = () => t.runtime.usage!.flush();
  const series = (teamId: number, query: Record<string, string> = {}) =>
    adminOk(t, { path: USAGE, query: { team_id: teamId, ...query } });

  it('counts reads of an existing group, verifications of group and embed tokens and embed tokens minted, today', async () => {
    const group = await seedGroup(t);
    const other = await seedGroup(t);
    for (let i = 0; i < 3; i++)
      expectSuccess(await call('GET', USER_PATH, { user_group_id: group.id }, { scope: 'write' }));
    for (let i = 0; i < 2; i++) expectSuccess(await call('POST', VERIFY_PATH, { token: group.token }));
    const embeds: string[] = [];
    for (let i = 0; i < 4; i++)
      embeds.push(expectSuccess(await call('POST', '/api/user/embed_token', { user_group_id: group.id })).embed_token);
    for (const embed of embeds.slice(0, 3)) expectSuccess(await call('POST', VERIFY_PATH, { token: embed }));
    // What fails is not usage: an unknown token, a mint for a group of another environment, a create.
    expectError(await call('POST', VERIFY_PATH, { token: `ugt_${'0'.repeat(64)}` }), 404, 'user_group_not_found');
    expectError(
      await call(
        'POST',
        '/api/user/embed_token',
        { user_group_id: group.id },
        { scope: 'read', environment: 'Testing' },
      ),
      404,
      'user_group_not_found',
    );
    expectSuccess(await call('GET', USER_PATH, { user_group_id: `${group.id}-new` }, { scope: 'write' }));
    expectSuccess(await call('POST', VERIFY_PATH, { token: other.token }));
    await flush();

    const body = await series(group.teamId);
    expect(body.user_group_id).toBe(group.id);
    expect(body.until).toBe(today());
    expect(body.days).toHaveLength(30);
    expect(body.days.at(-1)).toEqual({ day: today(), embed_tokens_minted: 4, verifications: 5, reads: 3 });
    expect(
      body.days.slice(0, -1).every((d: { reads: number; verifications: number }) => d.reads + d.verifications === 0),
    ).toBe(true);
    expect(body.totals).toEqual({ embed_tokens_minted: 4, verifications: 5, reads: 3 });
    expect((await series(other.teamId)).totals).toEqual({ embed_tokens_minted: 0, verifications: 1, reads: 0 });

    // A second batch adds to the day already written.
    expectSuccess(await call('POST', VERIFY_PATH, { token: embeds[3] }));
    await flush();
    expect((await series(group.teamId)).totals.verifications).toBe(6);
  });

  it('lists the busiest groups of the environment by the metric asked, within the limit', async () => {
    const [a, b] = [await seedGroup(t), await seedGroup(t)];
    const elsewhere = await seedGroup(t, { as: { environment: 'Testing' } });
    for (let i = 0; i < 30; i++) await call('POST', VERIFY_PATH, { token: a.token });
    for (let i = 0; i < 40; i++) await call('POST', VERIFY_PATH, { token: b.token });
    for (let i = 0; i < 50; i++)
      await call('POST', VERIFY_PATH, { token: elsewhere.token }, { scope: 'read', environment: 'Testing' });
    await flush();
    const top = await adminOk(t, { path: TOP, query: { limit: 2 } });
    expect(top).toMatchObject({ since: expect.any(String), until: today(), metric: 'verifications' });
    expect(top.user_groups.map((g: { team_id: number }) => g.team_id)).toEqual([b.teamId, a.teamId]);
    expect(top.user_groups[0]).toEqual({
      team_id: b.teamId,
      user_group_id: b.id,
      name: b.id,
      embed_tokens_minted: 0,
      verifications: 40,
      reads: 0,
    });
    const testing = await adminOk(t, { path: TOP, as: { environment: 'Testing' } });
    expect(testing.user_groups.map((g: { team_id: number }) => g.team_id)).toEqual([elsewhere.teamId]);
    // An admin may read its workspace's other environment, as with the other admin reads.
    expect((await adminOk(t, { path: TOP, query: { environment: 'Testing' } })).user_groups).toHaveLength(1);
    // Another workspace sees none of it.
    expect((await adminOk(t, { path: TOP, as: { workspace: 'other' } })).user_groups).toEqual([]);
    expect(
      (
        await adminOk(t, {
          path: TOP,
          query: { metric: 'embed_tokens_minted', since: '2020-01-01', until: '2020-12-31' },
        })
      ).user_groups,
    ).toEqual([]);
  });

  it('answers a group of another tenant, or none, as not found', async () => {
    const group = await seedGroup(t);
    expectError(
      await adminCall(t, { path: USAGE, query: { team_id: group.teamId }, as: { workspace: 'other' } }),
      404,
      'user_group_not_found',
    );
    expectError(
      await adminCall(t, { path: USAGE, query: { team_id: group.teamId, environment: 'Testing' } }),
      404,
      'user_group_not_found',
    );
    expectError(await adminCall(t, { path: USAGE, query: { team_id: 999_999_999 } }), 404, 'user_group_not_found');
  });

  it('is for admins only', async () => {
    const group = await seedGroup(t);
    for (const [path, query] of [
      [USAGE, { team_id: group.teamId }],
      [TOP, {}],
    ] as const)
      expectError(await adminCall(t, { path, query, as: { scope: 'write' } }), 403, 'insufficient_scope');
  });

  it.each([
    ['no team_id', USAGE, {}, 'team_id'],
    ['a team_id that is no id', USAGE, { team_id: 'abc' }, 'team_id'],
    ['a since that is no date', USAGE, { team_id: 1, since: '2026-1-01' }, 'since'],
    ['a since that names no day', USAGE, { team_id: 1, since: '2026-02-30' }, 'since'],
    ['an until that names no day', TOP, { until: '2026-13-01' }, 'until'],
    ['a since after until', TOP, { since: '2026-11-02', until: '2026-11-01' }, 'since'],
    ['a range over 400 days', TOP, { since: '2025-01-01', until: '2026-02-05' }, 'since'],
    ['an unknown metric', TOP, { metric: 'views' }, 'metric'],
    ['a limit of 0', TOP, { limit: 0 }, 'limit'],
    ['a limit over 100', TOP, { limit: 101 }, 'limit'],
    ['an unknown parameter', TOP, { team: 1 }, 'team'],
  ])('refuses %s with a 400 naming the field', async (_name, path, query, field) => {
    const res = await adminCall(t, { path, query });
    expect(res.status, res.raw).toBe(400);
    expect(res.body.error.field).toBe(field);
  });

  it('accepts a range of exactly 400 days', async () => {
    const group = await seedGroup(t);
    const body = await series(group.teamId, { since: '2025-01-01', until: '2026-02-04' });
    expect(body.days).toHaveLength(400);
  });
});

/*
 * Usage counts what was answered 2xx, and a refused call does no work: the rate limit (or a revoked
 * API token) is decided before the lookup's answer is counted and before any signature is checked or
 * made. Each API token here is limited to one request per 100 s (a bucket of 1), on a limiter whose
 * clock never moves: the first call of each is admitted, every later one refused. The first call reads
 * the API token; the later ones present a token the process remembers, whose admission waits for the
 * operation (src/domain/api-tokens/api-token-admission.ts): the path where counting once came first.
 * Signatures checked are read from /metrics (ugs_embed_token_signature_checks_total, counted by the
 * service where it calls the verification): what the process did, with the crypto left as it is.
 */
describe('usage of refused calls', () => {
  const CALLS = 8;
  let t: TestApp;
  let baseUrl: string;
  beforeAll(async () => {
    t = await createTestApp({
      usage: { flushMs: 600_000 },
      rateLimit: {
        limiter: createLocalRateLimiter(() => 0),
        defaultPolicy: { perSecond: 1_000_000, burst: 1_000_000 },
      },
    });
    baseUrl = await t.listen();
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The secret of a new read token limited to 0.01 requests a second, one at once. */
  async function limitedToken(): Promise<string> {
    const body = { name: uniqueId('limited'), scope: 'read', rate_limit: { per_second: 0.01, burst: 1 } };
    return (await adminOk(t, { method: 'POST', path: ADMIN.apiTokens, body })).api_token.token;
  }
  const call = (method: string, path: string, body: unknown) =>
    inject(t.app, { method, path, token: apiToken(t, { scope: 'read' }), body });
  const totals = async (teamId: number) => {
    await t.runtime.usage!.flush();
    return (await adminOk(t, { path: USAGE, query: { team_id: teamId } })).totals;
  };
  /** ES256 signature checks this process has run (GET /metrics). */
  const signatureChecks = async () =>
    sample((await t.app.inject({ method: 'GET', url: '/metrics' })).body, 'ugs_embed_token_signature_checks_total', {});
  const statuses = (responses: ApiResponse[]) => responses.map((res) => res.status);
  /** The same call `CALLS` times with `secret`, one after the other, over a real socket. */
  async function repeated(secret: string, method: string, path: string, body: unknown): Promise<ApiResponse[]> {
    const responses = [];
    for (let i = 0; i < CALLS; i++) responses.push(await send(baseUrl, { method, path, token: secret, body }));
    return responses;
  }
  const ONE_ADMITTED = [200, ...Array<number>(CALLS - 1).fill(429)];

  it('counts one verification of a group token for N calls answered 1 × 200 and N − 1 × 429', async () => {
    const group = await seedGroup(t);
    const before = await totals(group.teamId);
    const responses = await repeated(await limitedToken(), 'POST', VERIFY_PATH, { token: group.token });
    expect(statuses(responses)).toEqual(ONE_ADMITTED);
    for (const refused of responses.slice(1)) expectError(refused, 429, 'rate_limited', null);
    expect(await totals(group.teamId)).toEqual({ ...before, verifications: before.verifications + 1 });
  });

  it('counts one verification of an embed token for N calls answered 1 × 200 and N − 1 × 429, and checks one signature', async () => {
    const group = await seedGroup(t);
    const embed = expectSuccess(await call('POST', '/api/user/embed_token', { user_group_id: group.id })).embed_token;
    const before = await totals(group.teamId);
    const checksBefore = await signatureChecks();
    const responses = await repeated(await limitedToken(), 'POST', VERIFY_PATH, { token: embed });
    expect(statuses(responses)).toEqual(ONE_ADMITTED);
    expect(responses[0]!.body.embed.expires_at).toEqual(expect.any(String));
    expect(await totals(group.teamId)).toEqual({ ...before, verifications: before.verifications + 1 });
    expect(checksBefore).toEqual(expect.any(Number));
    expect(await signatureChecks()).toBe(checksBefore! + 1);
  });

  it('counts one read of an existing group, and one embed token minted, for N calls of each answered 1 × 200', async () => {
    const group = await seedGroup(t);
    const before = await totals(group.teamId);
    const reads = await repeated(await limitedToken(), 'GET', USER_PATH, { user_group_id: group.id });
    const mints = await repeated(await limitedToken(), 'POST', '/api/user/embed_token', {
      user_group_id: group.id,
    });
    expect([statuses(reads), statuses(mints)]).toEqual([ONE_ADMITTED, ONE_ADMITTED]);
    expect(await totals(group.teamId)).toEqual({
      ...before,
      reads: before.reads + 1,
      embed_tokens_minted: before.embed_tokens_minted + 1,
    });
  });

  it('counts nothing, and checks no signature, for a remembered API token revoked since its last call', async () => {
    const group = await seedGroup(t);
    const embed = expectSuccess(await call('POST', '/api/user/embed_token', { user_group_id: group.id })).embed_token;
    const unlimited = await issueApiToken(t, { scope: 'read' });
    // Admitted, and now remembered by the process.
    expectSuccess(
      await inject(t.app, { method: 'POST', path: VERIFY_PATH, token: unlimited.secret, body: { token: embed } }),
    );
    expectSuccess(await adminCall(t, { method: 'DELETE', path: `${ADMIN.apiTokens}/${unlimited.record.id}` }));
    const before = await totals(group.teamId);
    const checksBefore = await signatureChecks();
    for (const token of [embed, group.token])
      expectError(
        await inject(t.app, { method: 'POST', path: VERIFY_PATH, token: unlimited.secret, body: { token } }),
        401,
        'invalid_api_token',
        null,
      );
    expect(await totals(group.teamId)).toEqual(before);
    expect(checksBefore).toEqual(expect.any(Number));
    expect(await signatureChecks()).toBe(checksBefore);
  });
});
