// The hot reads (GET /api/user, POST /api/user/verify) take an API token this process has seen live
// from memory and confirm it inside their own statement (src/domain/api-tokens/api-token-check.ts). What that
// must never change: a token revoked by another instance is refused on the very next request with
// 401, whatever else is wrong with the request, and a changed rate limit applies from the next one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalRateLimiter } from '../../src/rate-limit/rate-limiter.js';
import { inject, type ApiRequest } from '../support/http-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { expectError } from '../http/helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { adminCaller } from '../support/callers.js';
import { USER_PATH, VERIFY_PATH } from '../support/user-group-api.js';

const MINT_PATH = '/api/user/embed_token';

describe('API tokens remembered by the hot reads', () => {
  // Two instances on one database: `serving` remembers tokens, `other` changes them.
  let serving: TestApp;
  let other: TestApp;
  let groupToken: string;
  let embedToken: string;
  const groupId = uniqueId('remembered');

  beforeAll(async () => {
    serving = await createTestApp({
      rateLimit: { limiter: createLocalRateLimiter(() => 0), defaultPolicy: { perSecond: 1, burst: 1_000 } },
    });
    other = await createTestApp({ database: serving.db });
    const created = await inject(serving.app, {
      method: 'GET',
      path: USER_PATH,
      token: serving.tokens.default.Customer.write,
      body: { user_group_id: groupId },
    });
    expect(created.status, created.raw).toBe(200);
    groupToken = created.body.user_group.token;
    const minted = await inject(serving.app, {
      method: 'POST',
      path: MINT_PATH,
      token: serving.tokens.default.Customer.write,
      body: { user_group_id: groupId },
    });
    expect(minted.status, minted.raw).toBe(200);
    embedToken = minted.body.embed_token;
  });
  afterAll(async () => {
    await other?.close();
    await serving?.close();
  });

  /** A new token, used once on `serving` (so remembered there), then revoked through `other`. */
  async function rememberedThenRevoked(): Promise<string> {
    const caller = await adminCaller(other);
    const issued = await other.runtime.services.apiTokens.createApiToken(caller, {
      name: uniqueId('hot'),
      scope: 'write',
      environment: 'Customer',
    });
    const first = await inject(serving.app, {
      method: 'POST',
      path: VERIFY_PATH,
      token: issued.secret,
      body: { token: groupToken },
    });
    expect(first.status, first.raw).toBe(200);
    await other.runtime.services.apiTokens.revokeApiToken(caller, issued.record.id);
    return issued.secret;
  }

  const refusals: Array<[string, Omit<ApiRequest, 'token'>]> = [
    ['a verify that finds the group', { method: 'POST', path: VERIFY_PATH, body: { token: 'placeholder' } }],
    ['a get-or-create of an existing group', { method: 'GET', path: USER_PATH, body: { user_group_id: groupId } }],
    [
      'a get-or-create of a new group',
      { method: 'GET', path: USER_PATH, body: { user_group_id: uniqueId('never-created') } },
    ],
    [
      'a body that fails validation',
      { method: 'GET', path: USER_PATH, body: { user_group_id: groupId, properties: 5 } },
    ],
    ['a body that is not JSON', { method: 'POST', path: VERIFY_PATH, rawBody: '{"token":' }],
    [
      'a verify of a malformed group token (no statement runs)',
      { method: 'POST', path: VERIFY_PATH, body: { token: 'not-a-token' } },
    ],
    [
      'a verify of an unknown group token',
      { method: 'POST', path: VERIFY_PATH, body: { token: `ugt_${'0'.repeat(64)}` } },
    ],
    // Its lookup confirms nothing: the answer's own admission reads the token.
    ['a verify of an embed token that would succeed', { method: 'POST', path: VERIFY_PATH, body: { token: 'embed' } }],
    // The mint's group read confirms the token, as get-or-create's does.
    ['a mint that would succeed', { method: 'POST', path: MINT_PATH, body: { user_group_id: groupId } }],
    [
      'a mint for a group that does not exist',
      { method: 'POST', path: MINT_PATH, body: { user_group_id: uniqueId('never-created') } },
    ],
  ];

  it.each(refusals)(
    'refuses a token revoked by another instance on the very next request: %s',
    async (_label, request) => {
      const secret = await rememberedThenRevoked();
      const placeholder =
        request.path === VERIFY_PATH ? (request.body as { token?: string } | undefined)?.token : undefined;
      const body =
        placeholder === 'placeholder'
          ? { token: groupToken }
          : placeholder === 'embed'
            ? { token: embedToken }
            : request.body;
      const refused = await inject(serving.app, { ...request, ...(body === undefined ? {} : { body }), token: secret });
      expectError(refused, 401, 'invalid_api_token');
      expect(refused.headers['www-authenticate']).toBe('Token');
      // Nothing was created for it.
      if (request.path === USER_PATH) {
        const id = (request.body as { user_group_id: string }).user_group_id;
        const group = await serving.runtime.store.findUserGroupByProvidedId((await adminCaller(serving)).tenant, id);
        expect(group === null).toBe(id !== groupId);
      }
    },
  );

  it('applies a rate limit changed by another instance from the next request', async () => {
    const caller = await adminCaller(other);
    const issued = await other.runtime.services.apiTokens.createApiToken(caller, {
      name: uniqueId('limited'),
      scope: 'write',
      environment: 'Customer',
    });
    const before = await inject(serving.app, {
      method: 'GET',
      path: USER_PATH,
      token: issued.secret,
      body: { user_group_id: groupId },
    });
    expect(before.headers['ratelimit-limit']).toBe('1000');
    await other.runtime.services.apiTokens.updateApiTokenRateLimit(caller, issued.record.id, {
      perSecond: 1,
      burst: 2,
    });
    const after = await inject(serving.app, {
      method: 'GET',
      path: USER_PATH,
      token: issued.secret,
      body: { user_group_id: groupId },
    });
    expect(after.status, after.raw).toBe(200);
    expect(after.headers['ratelimit-limit']).toBe('2');
    // The bucket of 2 is empty after one more: the third is refused, even with a body that fails validation.
    expect(
      (
        await inject(serving.app, {
          method: 'POST',
          path: VERIFY_PATH,
          token: issued.secret,
          body: { token: groupToken },
        })
      ).status,
    ).toBe(200);
    expectError(
      await inject(serving.app, {
        method: 'GET',
        path: USER_PATH,
        token: issued.secret,
        body: { user_group_id: groupId, properties: 5 },
      }),
      429,
      'rate_limited',
    );
  });
});
