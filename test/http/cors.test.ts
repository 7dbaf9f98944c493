// Cross-origin access (docs/api.md, "Cross-origin"): the public key documents answer any origin for
// GET, HEAD and OPTIONS without credentials; /api answers only the origins the operator listed, none
// by default, preflight included. Headers as a browser reads them; the browser itself:
// test/console/cross-origin.browser.test.ts.
import { describe, expect, it } from 'vitest';
import { apiToken } from '../support/callers.js';
import type { ApiResponse, Client } from '../support/http-client.js';
import { USER_PATH } from '../support/user-group-api.js';
import { expectError, expectSuccess, TRANSPORTS, useClient } from './helpers.js';

const LISTED = 'https://app.example.com';
const ALSO_LISTED = 'http://localhost:3000';
const ELSEWHERE = 'https://elsewhere.example';
const EMBED_PATH = '/api/user/embed_token';

const DOCUMENTS = [
  '/w/default/.well-known/jwks.json',
  '/w/default/.well-known/openid-configuration',
  '/w/default/testing/.well-known/jwks.json',
  '/w/default/testing/.well-known/openid-configuration',
  // A workspace that does not exist answers as one without keys: the same grant.
  '/w/no-such-workspace/.well-known/jwks.json',
];

/** A browser's preflight: OPTIONS with the method (and headers) the page's request will use. */
const preflight = (path: string, origin: string, method: string, headers?: string) => ({
  method: 'OPTIONS',
  path,
  headers: {
    origin,
    'access-control-request-method': method,
    ...(headers === undefined ? {} : { 'access-control-request-headers': headers }),
  },
});

/** Comma-separated header values, lower-cased, as a set to compare. */
const listed = (value: ApiResponse['headers'][string]) =>
  new Set(
    String(value ?? '')
      .split(',')
      .map((item) => item.trim().toLowerCase())
      .filter((item) => item !== ''),
  );

function expectNoGrant(res: ApiResponse): void {
  expect(res.headers['access-control-allow-origin'], res.raw).toBeUndefined();
  expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  expect(res.headers['access-control-expose-headers']).toBeUndefined();
}

for (const transport of TRANSPORTS) {
  describe(`the public key documents from any origin, over ${transport.name}`, () => {
    // No origin listed: the documents' grant does not depend on the API's list.
    const fixture = useClient(transport);
    const client = (req: Parameters<Client>[0]) => fixture.client(req);

    it('GET answers any origin, and none, with Access-Control-Allow-Origin: * and no credentials or Vary', async () => {
      for (const path of DOCUMENTS) {
        for (const headers of [{ origin: ELSEWHERE }, { origin: 'null' }, {}] as Array<Record<string, string>>) {
          const res = await client({ method: 'GET', path, headers });
          expect(res.status, `${path} ${res.raw}`).toBe(200);
          expect(res.headers['access-control-allow-origin']).toBe('*');
          expect(res.headers['access-control-allow-credentials']).toBeUndefined();
          // The same answer for every origin: a shared cache may keep one copy.
          expect(res.headers.vary).toBeUndefined();
          expect(res.headers['cache-control']).toBe('public, max-age=300');
        }
      }
    });

    it("HEAD answers with GET's status and headers and no body", async () => {
      for (const path of DOCUMENTS) {
        const got = await client({ method: 'GET', path, headers: { origin: ELSEWHERE } });
        const head = await client({ method: 'HEAD', path, headers: { origin: ELSEWHERE } });
        expect(head.status, path).toBe(200);
        expect(head.raw).toBe('');
        for (const header of ['access-control-allow-origin', 'cache-control', 'content-type', 'content-length'])
          expect(head.headers[header], `${path} ${header}`).toBe(got.headers[header]);
      }
    });

    it('a preflight is answered 204 with the methods, any header, a max-age and no credentials', async () => {
      for (const path of DOCUMENTS) {
        const res = await client(preflight(path, ELSEWHERE, 'GET', 'x-verifier, if-none-match'));
        expect(res.status, `${path} ${res.raw}`).toBe(204);
        expect(res.raw).toBe('');
        expect(res.headers['access-control-allow-origin']).toBe('*');
        expect(listed(res.headers['access-control-allow-methods'])).toEqual(new Set(['get', 'head', 'options']));
        expect(res.headers['access-control-allow-headers']).toBe('*');
        expect(Number(res.headers['access-control-max-age'])).toBeGreaterThan(0);
        expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      }
    });

    it('a plain OPTIONS says what the document allows; other methods stay 405 with the same Allow', async () => {
      const path = DOCUMENTS[0]!;
      const options = await client({ method: 'OPTIONS', path });
      expect(options.status).toBe(204);
      expect(listed(options.headers.allow)).toEqual(new Set(['get', 'head', 'options']));
      const post = await client({ method: 'POST', path, body: {}, headers: { origin: ELSEWHERE } });
      expectError(post, 405, 'method_not_allowed');
      expect(listed(post.headers.allow)).toEqual(new Set(['get', 'head', 'options']));
    });

    it('an error of a document carries the grant too, so that the page can read it', async () => {
      const res = await client({
        method: 'GET',
        path: `${DOCUMENTS[0]!}?x=%00`,
        headers: { origin: ELSEWHERE },
      });
      expectError(res, 400, 'invalid_field', 'x');
      expect(res.headers['access-control-allow-origin']).toBe('*');
    });

    it('by default /api grants no origin: a preflight follows the normal rules (405), a request gets no grant', async () => {
      const refused = await client(preflight(EMBED_PATH, LISTED, 'POST', 'authorization, content-type'));
      expectError(refused, 405, 'method_not_allowed');
      expectNoGrant(refused);
      const res = await client({
        method: 'GET',
        path: `${USER_PATH}?user_group_id=cors-default`,
        token: apiToken(fixture.t, { scope: 'write' }),
        headers: { origin: LISTED },
      });
      expectSuccess(res);
      expectNoGrant(res);
      expect(res.headers.vary).toBeUndefined();
    });
  });

  describe(`/api from the origins listed in configuration, over ${transport.name}`, () => {
    const fixture = useClient(transport, { corsOrigins: [LISTED, ALSO_LISTED] });
    const client = (req: Parameters<Client>[0]) => fixture.client(req);
    const token = () => apiToken(fixture.t, { scope: 'write' });
    const getOrCreate = (origin: string | undefined, id: string) =>
      client({
        method: 'GET',
        path: `${USER_PATH}?user_group_id=${id}`,
        token: token(),
        headers: origin === undefined ? {} : { origin },
      });

    it("a listed origin's preflight is answered 204 before authentication, with the methods and headers the API takes", async () => {
      for (const origin of [LISTED, ALSO_LISTED]) {
        const res = await client(preflight(EMBED_PATH, origin, 'POST', 'authorization, content-type, idempotency-key'));
        expect(res.status, res.raw).toBe(204);
        expect(res.raw).toBe('');
        expect(res.headers['access-control-allow-origin']).toBe(origin);
        expect(listed(res.headers.vary)).toContain('origin');
        expect(listed(res.headers['access-control-allow-methods'])).toEqual(
          new Set(['get', 'post', 'put', 'patch', 'delete']),
        );
        expect(listed(res.headers['access-control-allow-headers'])).toEqual(
          new Set(['authorization', 'explo-authorization', 'content-type', 'idempotency-key']),
        );
        expect(Number(res.headers['access-control-max-age'])).toBeGreaterThan(0);
        expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      }
    });

    it('a listed origin gets the grant on the request itself, with the headers a client reads exposed', async () => {
      const res = await client({
        method: 'POST',
        path: EMBED_PATH,
        token: token(),
        body: { user_group_id: 'cors-listed' },
        headers: { origin: LISTED },
      });
      // The group does not exist: the refusal is the page's to read as well.
      expectError(res, 404, 'user_group_not_found');
      expect(res.headers['access-control-allow-origin']).toBe(LISTED);
      expect(listed(res.headers.vary)).toContain('origin');

      const created = await getOrCreate(ALSO_LISTED, 'cors-listed');
      expectSuccess(created);
      expect(created.headers['access-control-allow-origin']).toBe(ALSO_LISTED);
      expect(created.headers['access-control-allow-credentials']).toBeUndefined();
      const exposed = listed(created.headers['access-control-expose-headers']);
      for (const header of [
        'retry-after',
        'ratelimit-limit',
        'ratelimit-remaining',
        'ratelimit-reset',
        'ratelimit-policy',
        'x-request-id',
        'idempotent-replayed',
      ])
        expect(exposed, header).toContain(header);
    });

    it('a refusal of authentication reaches a listed origin with the grant (401 readable by the page)', async () => {
      const res = await client({ method: 'GET', path: `${USER_PATH}?user_group_id=x`, headers: { origin: LISTED } });
      expectError(res, 401, 'unauthenticated');
      expect(res.headers['access-control-allow-origin']).toBe(LISTED);
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    });

    it('any other origin gets no grant: its preflight follows the normal rules, its request is served as any other', async () => {
      // Exact strings: another scheme, port, case or a trailing slash is another origin.
      const others = [ELSEWHERE, 'null', 'http://app.example.com', 'https://app.example.com:8443', `${LISTED}/`];
      for (const origin of others) {
        const refused = await client(preflight(EMBED_PATH, origin, 'POST', 'authorization, content-type'));
        expectError(refused, 405, 'method_not_allowed');
        expectNoGrant(refused);
        expect(listed(refused.headers.vary)).toContain('origin');

        const served = await getOrCreate(origin, 'cors-elsewhere');
        expectSuccess(served);
        expectNoGrant(served);
        expect(listed(served.headers.vary)).toContain('origin');
      }
    });

    it('a request without Origin (a server) is unchanged: no grant, no Vary', async () => {
      const res = await getOrCreate(undefined, 'cors-server');
      expectSuccess(res);
      expectNoGrant(res);
      expect(res.headers.vary).toBeUndefined();
    });

    it("the list is /api's only: a listed origin gets no grant elsewhere (the console's session, health)", async () => {
      for (const path of ['/healthz', '/console/session', '/openapi.json']) {
        const res = await client({ method: 'GET', path, headers: { origin: LISTED } });
        expectNoGrant(res);
        const refused = await client(preflight(path, LISTED, 'GET'));
        expect(refused.status, path).not.toBe(204);
        expectNoGrant(refused);
      }
    });
  });
}
