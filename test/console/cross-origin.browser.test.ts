// Cross-origin in a real browser (docs/api.md, "Cross-origin"; docs/renderers.md, "Verify in the
// browser"): Chromium on pages of two other origins than a real `ugs serve`'s, loading @ugs/client's
// browser build (its `#crypto` WebCrypto implementation) as ES modules. Any origin verifies an embed
// token offline through the published JWKS; only the origin listed in UGS_CORS_ORIGINS calls /api.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServeProcess, type ServeProcess } from '../support/serve-process.js';
import { startStaticFilesServer, type StaticFilesServer } from '../support/static-files-server.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { REPO, requireBuild } from '../support/ugs-command.js';
import { launchChromium } from './browser.js';
import type * as UgsClient from '../../packages/client/src/index.js';

/** What the renderer page's code uses of its global scope: @ugs/client's exports (the built package) and its origin. */
interface RendererGlobals {
  ugs: typeof UgsClient;
  location: { origin: string };
}

const CLIENT = join(REPO, 'packages/client');
const JOSE = join(REPO, 'node_modules/jose');

interface PackageJson {
  exports: Record<string, { import?: string; default?: string } | string>;
  imports?: Record<string, { browser?: string }>;
}

const packageJson = (dir: string) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;

/**
 * Where the page finds each module, as a bundler targeting browsers would resolve it: @ugs/client's
 * `import` export, its `#crypto` under the `browser` condition, jose's default export.
 */
function importMap(): string {
  const client = packageJson(CLIENT);
  const jose = packageJson(JOSE);
  const exported = (entry: PackageJson['exports'][string] | undefined) =>
    typeof entry === 'string' ? entry : (entry?.import ?? entry?.default);
  const at = (prefix: string, path: string | undefined) => {
    if (path === undefined) throw new Error(`no entry for ${prefix} in its package.json`);
    return `${prefix}${path.replace(/^\.\//, '')}`;
  };
  return JSON.stringify({
    imports: {
      '@ugs/client': at('/client/', exported(client.exports['.'])),
      '#crypto': at('/client/', client.imports?.['#crypto']?.browser),
      jose: at('/jose/', exported(jose.exports['.'])),
    },
  });
}

/** The renderer's page: @ugs/client loaded, and its exports on `window.ugs` once ready. */
const RENDERER_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>loading</title>
<script type="importmap">${importMap()}</script>
<script type="module">
  import * as ugs from '@ugs/client';
  window.ugs = ugs;
  document.title = 'ready';
</script>
</head><body><main><h1>Renderer</h1></main></body></html>`;

let db: TestDatabase;
let server: ServeProcess;
let pages: StaticFilesServer;
let browser: Browser;
let context: BrowserContext;
let admin: string;
/** The page's origin listed in UGS_CORS_ORIGINS, and one that is not: one server, two host names. */
let listedOrigin: string;
let otherOrigin: string;
/** What the browser logged as errors (CORS refusals among them). */
const consoleErrors: string[] = [];

async function rendererAt(origin: string): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  await page.goto(`${origin}/renderer.html`);
  await page.waitForFunction("document.title === 'ready'");
  expect(await page.evaluate('location.origin')).toBe(origin);
  return page;
}

/** Mints an embed token server to server (as an application's back end does), pinned to `origin`. */
async function mintFor(origin: string): Promise<string> {
  const minted = await server.request({
    method: 'POST',
    path: '/api/user/embed_token',
    token: admin,
    body: { user_group_id: 'acme', origin },
  });
  if (minted.status !== 200) throw new Error(`mint: ${minted.status} ${minted.raw}`);
  return minted.body.embed_token as string;
}

/** In the page: verifies `token` offline with @ugs/client against the service's JWKS, for the page's origin. */
function verifyInPage(page: Page, issuer: string, token: string) {
  return page.evaluate(
    async ({ issuer, token }) => {
      const { ugs, location } = globalThis as unknown as RendererGlobals;
      const verify = ugs.createEmbedTokenVerifier({ issuer, audience: 'ugs-embed' });
      const claims = await verify(token, { origin: location.origin });
      return { sub: claims.sub, iss: claims.iss, origin: claims.ugs.origin };
    },
    { issuer, token },
  );
}

describe('cross-origin in Chromium', () => {
  beforeAll(async () => {
    requireBuild('the client build and the server that the browser test loads');
    pages = await startStaticFilesServer({ '/client/': CLIENT, '/jose/': JOSE }, { '/renderer.html': RENDERER_PAGE });
    listedOrigin = `http://localhost:${pages.port}`;
    otherOrigin = `http://127.0.0.1:${pages.port}`;
    db = await createTestDatabase('sqlite');
    server = await startServeProcess(db, { env: { UGS_CORS_ORIGINS: listedOrigin } });
    admin = server.adminTokens().Customer;
    const created = await server.request({ method: 'GET', path: '/api/user?user_group_id=acme', token: admin });
    if (created.status !== 200) throw new Error(`create: ${created.status} ${created.raw}`);
    browser = await launchChromium();
    context = await browser.newContext();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await pages?.close();
    await db?.drop();
  });

  it('a page of an origin not listed verifies an embed token offline through the JWKS, preflight included', async () => {
    const page = await rendererAt(otherOrigin);
    const issuer = `${server.baseUrl}/w/default`;
    const token = await mintFor(otherOrigin);
    expect(await verifyInPage(page, issuer, token)).toEqual({ sub: 'acme', iss: issuer, origin: otherOrigin });

    // A verifier that sends a header of its own makes the browser ask first: the preflight is granted too.
    const keys = await page.evaluate(async (jwks) => {
      const response = await fetch(jwks, { headers: { 'x-renderer': 'dashboard' } });
      return ((await response.json()) as { keys: Array<{ kid: string }> }).keys.length;
    }, `${issuer}/.well-known/jwks.json`);
    expect(keys).toBeGreaterThan(0);
    await page.close();
  });

  it('a page of an origin not listed gets no grant from /api: the browser withholds the answer, whatever the credential', async () => {
    const page = await rendererAt(otherOrigin);
    consoleErrors.length = 0;
    const outcome = await page.evaluate(
      async ({ baseUrl, apiToken }) => {
        const { createClient } = (globalThis as unknown as RendererGlobals).ugs;
        const client = createClient({ baseUrl, apiToken, maxRetries: 0 });
        const minted = await client.mintEmbedToken({ user_group_id: 'acme' }).then(
          () => 'answered',
          (error: { code?: string }) => error.code,
        );
        // A simple request (no preflight) is sent, but its answer is not shown to the page.
        const simple = await fetch(`${baseUrl}/healthz`).then(
          () => 'answered',
          (error: Error) => error.name,
        );
        const api = await fetch(`${baseUrl}/api/user?user_group_id=acme`).then(
          () => 'answered',
          (error: Error) => error.name,
        );
        return { minted, simple, api };
      },
      { baseUrl: server.baseUrl, apiToken: admin },
    );
    expect(outcome).toEqual({ minted: 'network_error', simple: 'TypeError', api: 'TypeError' });
    expect(consoleErrors.join('\n')).toMatch(/blocked by CORS policy/);
    await page.close();
  });

  it('the listed origin calls /api with @ugs/client (preflighted writes, exposed headers), never with credentials', async () => {
    const page = await rendererAt(listedOrigin);
    const issuer = `${server.baseUrl}/w/default`;
    const outcome = await page.evaluate(
      async ({ baseUrl, apiToken, issuer }) => {
        const { ugs, location } = globalThis as unknown as RendererGlobals;
        const { createClient, createEmbedTokenVerifier } = ugs;
        const client = createClient({ baseUrl, apiToken, maxRetries: 0 });
        // A write: Authorization, Content-Type and Idempotency-Key, so the browser asks first.
        const { embed_token } = await client.mintEmbedToken({ user_group_id: 'acme', origin: location.origin });
        const verify = createEmbedTokenVerifier({ issuer, audience: 'ugs-embed' });
        const claims = await verify(embed_token, { origin: location.origin });
        // A refusal is the page's to read, with the request id the service exposes.
        const refused = await client.mintEmbedToken({ user_group_id: 'nobody' }).then(
          () => undefined,
          (error: { status: number; code: string; requestId?: string }) => ({
            status: error.status,
            code: error.code,
            requestId: typeof error.requestId,
          }),
        );
        const response = await fetch(`${baseUrl}/api/user?user_group_id=acme`, {
          headers: { authorization: `Token ${apiToken}` },
        });
        const requestId = response.headers.get('x-request-id');
        // Credentials are never granted across origins: a credentialed request's answer is withheld.
        const credentialed = await fetch(`${baseUrl}/api/user?user_group_id=acme`, {
          headers: { authorization: `Token ${apiToken}` },
          credentials: 'include',
        }).then(
          () => 'answered',
          (error: Error) => error.name,
        );
        return {
          sub: claims.sub,
          origin: claims.ugs.origin,
          refused,
          status: response.status,
          requestId,
          credentialed,
        };
      },
      { baseUrl: server.baseUrl, apiToken: admin, issuer },
    );
    expect(outcome).toEqual({
      sub: 'acme',
      origin: listedOrigin,
      refused: { status: 404, code: 'user_group_not_found', requestId: 'string' },
      status: 200,
      requestId: expect.stringMatching(/\S/),
      credentialed: 'TypeError',
    });
    await page.close();
  });

  it("a page keeps a session's token fresh with @ugs/client, from the token's own origin only (the preflight grants any)", async () => {
    const minted = await server.request({
      method: 'POST',
      path: '/api/user/embed_token',
      token: admin,
      body: { user_group_id: 'acme', origin: otherOrigin, expires_in: 60, session_seconds: 600 },
    });
    if (minted.status !== 200) throw new Error(`mint: ${minted.status} ${minted.raw}`);
    const token = minted.body.embed_token as string;
    const refreshIn = (page: Page) =>
      page.evaluate(
        async ({ baseUrl, token }) => {
          const { ugs } = globalThis as unknown as RendererGlobals;
          // A margin of 59 s on a 60 s token: the helper refreshes at once.
          return new Promise<{ fresh: string } | { ended: string }>((resolve) => {
            const keeper = ugs.keepEmbedTokenFresh({
              baseUrl,
              token,
              marginSeconds: 59,
              onToken: (fresh) => {
                keeper.stop();
                resolve({ fresh });
              },
              onEnd: (error) => resolve({ ended: String((error as Error).name) }),
            });
          });
        },
        { baseUrl: server.baseUrl, token },
      );
    // The token's own origin (not listed in UGS_CORS_ORIGINS): a preflighted POST, answered to it.
    const own = await refreshIn(await rendererAt(otherOrigin));
    expect(own).toEqual({ fresh: expect.stringMatching(/^ey/) });
    const fresh = (own as { fresh: string }).fresh;
    const verified = await server.request({
      method: 'POST',
      path: '/api/user/verify',
      token: admin,
      body: { token: fresh },
    });
    expect(verified.status, verified.raw).toBe(200);
    expect(verified.body.embed.origin).toBe(otherOrigin);
    // The listed origin is another origin than the token's: refused without a grant, so the page cannot
    // even read why (a fetch failure to it, which keepEmbedTokenFresh would retry until the token expires).
    const other = await rendererAt(listedOrigin);
    const refused = await other.evaluate(
      async ({ baseUrl, token }) => {
        const { ugs } = globalThis as unknown as RendererGlobals;
        return ugs.refreshEmbedToken(token, { baseUrl }).then(
          () => 'refreshed',
          (error: { code?: string }) => error.code,
        );
      },
      { baseUrl: server.baseUrl, token: fresh },
    );
    expect(refused).toBe('network_error');
  });
});
