import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject, type ApiResponse, type UnsignedRequest } from '../support/http-client.js';
import type { TestApp } from '../support/test-app.js';
import { expectError, expectSuccess, expectUnchanged } from './helpers.js';
import { adminCaller, apiToken } from '../support/callers.js';
import { createTestApp } from '../support/test-app.js';

/**
 * Builds a request that an admin API token makes succeed. Called once per request sent, so it can
 * set up fresh state (a group to rotate or delete) each time.
 */
export type MakeRequest = (t: TestApp) => Promise<UnsignedRequest>;

const UNKNOWN_LIVE_TOKEN = `ugs_live_${'0'.repeat(64)}`;
const SANE_GENERATED_ID = /^[\x21-\x7e]{1,128}$/;

/*
 * The endpoints of a file share one app: no case needs a configuration of its own, each sets up the
 * state it sends (a fresh group, token or data source) and compares the database before and after,
 * and building an app (its database, migrations and tokens) per endpoint cost most of the file's time.
 * It is built before the first block and closed after the last one registered.
 */
let sharedApp: Promise<TestApp> | undefined;
let blocksRegistered = 0;
let blocksFinished = 0;

function useSharedTestApp(): { readonly t: TestApp } {
  let app: TestApp | undefined;
  blocksRegistered += 1;
  beforeAll(async () => {
    sharedApp ??= createTestApp();
    app = await sharedApp;
  });
  afterAll(async () => {
    blocksFinished += 1;
    if (blocksFinished < blocksRegistered || !sharedApp) return;
    const closing = sharedApp;
    sharedApp = undefined;
    await (await closing).close();
  });
  return {
    get t() {
      if (!app) throw new Error('the test app exists only inside tests');
      return app;
    },
  };
}

/** The authentication contract of one /api endpoint (docs/api.md#wire-conventions), on the file's shared app. */
export function describeAuth(name: string, makeRequest: MakeRequest): void {
  describe(`${name}: authentication`, () => {
    const ctx = useSharedTestApp();

    /** Sets up the request now; the returned function sends it. */
    async function prepare(
      authorization: string | undefined,
      headers: Record<string, string> = {},
    ): Promise<() => Promise<ApiResponse>> {
      const req = await makeRequest(ctx.t);
      const allHeaders = { ...req.headers, ...headers, ...(authorization === undefined ? {} : { authorization }) };
      return () => inject(ctx.t.app, { ...req, headers: allHeaders });
    }

    const sendWith = async (authorization: string | undefined, headers?: Record<string, string>) =>
      (await prepare(authorization, headers))();

    /** A rejected request must change nothing and say how to authenticate. */
    async function expectRejected(
      authorization: string | undefined,
      code: 'unauthenticated' | 'invalid_api_token',
    ): Promise<void> {
      const res = await expectUnchanged(ctx.t, await prepare(authorization));
      expectError(res, 401, code, null);
      expect(res.headers['www-authenticate']).toBe('Token');
    }

    it('answers a missing Authorization header with 401 unauthenticated', async () => {
      await expectRejected(undefined, 'unauthenticated');
    });

    it.each([
      ['another scheme', () => 'Basic dXNlcjpwYXNz'],
      ['the scheme alone', () => 'Token'],
      ['the scheme and a space', () => 'Token '],
      ['an empty header', () => ''],
      ['no space after the scheme', (secret: string) => `Token${secret}`],
      ['two credentials', (secret: string) => `Token ${secret} ${secret}`],
      ['the secret without a scheme', (secret: string) => secret],
    ])('answers a malformed header (%s) with 401 unauthenticated', async (_label, header) => {
      await expectRejected(header(apiToken(ctx.t)), 'unauthenticated');
    });

    it.each([
      ['a well-formed secret that was never issued', UNKNOWN_LIVE_TOKEN],
      ['a string that is no API token at all', 'not-a-token'],
      ['a user group token', `ugt_${'a'.repeat(64)}`],
    ])('answers an unknown token (%s) with 401 invalid_api_token', async (_label, secret) => {
      await expectRejected(`Token ${secret}`, 'invalid_api_token');
    });

    it('answers a revoked token with 401 invalid_api_token, while it worked before', async () => {
      const caller = await adminCaller(ctx.t);
      const issued = await ctx.t.runtime.services.apiTokens.createApiToken(caller, {
        name: 'to revoke',
        scope: 'admin',
        environment: 'Customer',
      });
      expectSuccess(await sendWith(`Token ${issued.secret}`));
      await ctx.t.runtime.services.apiTokens.revokeApiToken(caller, issued.record.id);
      await expectRejected(`Token ${issued.secret}`, 'invalid_api_token');
    });

    it.each(['Token', 'token', 'TOKEN', 'Bearer', 'bearer'])('accepts the scheme word %s', async (scheme) => {
      expectSuccess(await sendWith(`${scheme} ${apiToken(ctx.t)}`));
    });

    it('sends the exact failure envelope, its request_id equal to X-Request-Id', async () => {
      const res = await sendWith(undefined);
      expect(res.body).toStrictEqual({
        success: 0,
        error: { code: 'unauthenticated', message: expect.any(String), request_id: res.headers['x-request-id'] },
      });
      expect(res.headers['x-request-id']).toMatch(SANE_GENERATED_ID);
    });

    it("carries the caller's request id into the failure envelope", async () => {
      const res = await sendWith(`Token ${UNKNOWN_LIVE_TOKEN}`, { 'x-request-id': 'auth-trace-1' });
      expect(res.headers['x-request-id']).toBe('auth-trace-1');
      expect(res.body.error.request_id).toBe('auth-trace-1');
    });
  });
}
