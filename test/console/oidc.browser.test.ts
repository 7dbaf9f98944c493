// Console sign-in through the company's identity provider, in Chromium against a real OpenID provider
// (oidc-provider, test/support/oidc-provider.ts) on another site than the service: an admin person
// (Keycloak's `/path` groups), a read-only one (an Entra group object id), one in no mapped group
// (Google, which sends no `groups`); sign-out at both ends; a group removed at the provider taking
// effect at the session's next renewal; the person in the audit trail; an admin person ending another
// session on the people's sessions page. Token sign-in is off.
import Database from 'better-sqlite3';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../support/http-client.js';
import { reserveTestProvider, type TestProvider } from '../support/oidc-provider.js';
import { startServeProcess, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { expectNoSeriousAxeViolations, launchChromium, screenshot } from './browser.js';

const ENTRA_READERS = '8c1f2f5e-3b7a-4d3e-9a61-0f6d1c2b7e44';
const ROLES = {
  '/ugs/admins': [{ workspace: 'default', environment: '*', access: 'admin' }],
  [ENTRA_READERS]: [{ workspace: 'default', environment: 'Customer', access: 'read' }],
};

let db: TestDatabase;
let idp: TestProvider;
let server: ServeProcess;
let admin: string;
let browser: Browser;

/** A browser of one person: its own cookies, at the provider and at the service. */
async function personBrowser(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  return { context, page: await context.newPage() };
}

/** Signs in at the provider's own login and consent pages, from the console's sign-in page. */
async function signIn(page: Page, login: string): Promise<void> {
  await page.goto(`${server.baseUrl}/console/`);
  await page.getByRole('link', { name: 'Sign in with your identity provider' }).click();
  await page.waitForURL(`${idp.issuer}/**`);
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
}

describe('console sign-in through an identity provider, in Chromium', () => {
  let ada: { context: BrowserContext; page: Page };
  let rita: { context: BrowserContext; page: Page };

  beforeAll(async () => {
    db = await createTestDatabase('sqlite');
    idp = await reserveTestProvider();
    idp.people.set('ada', { email: 'ada@example.com', groups: ['/ugs/admins', '/ugs/other'] });
    idp.people.set('rita', { email: 'rita@example.com', groups: [ENTRA_READERS] });
    idp.people.set('gus', { email: 'gus@example.com' });
    server = await startServeProcess(db, {
      env: {
        UGS_OIDC_ISSUER: idp.issuer,
        UGS_OIDC_CLIENT_ID: idp.clientId,
        UGS_OIDC_CLIENT_SECRET: idp.clientSecret,
        UGS_OIDC_ROLES: JSON.stringify(ROLES),
        UGS_TOKEN_SIGN_IN: 'off',
      },
    });
    await idp.start(server.baseUrl);
    admin = server.adminTokens().Customer;
    const created = await send(server.baseUrl, {
      method: 'GET',
      path: '/api/user?user_group_id=acme&name=Acme',
      token: admin,
    });
    expect(created.status, created.raw).toBe(200);
    browser = await launchChromium();
    ada = await personBrowser();
    rita = await personBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await idp?.close();
    await db?.drop();
  });

  it('offers only the identity provider when token sign-in is off', async () => {
    await ada.page.goto(`${server.baseUrl}/console/`);
    await ada.page.getByRole('link', { name: 'Sign in with your identity provider' }).waitFor();
    expect(await ada.page.getByLabel('Admin API token').count()).toBe(0);
    await expectNoSeriousAxeViolations(ada.page, 'oidc sign-in');
    await screenshot(ada.page, 'oidc-sign-in');
  });

  it('signs in an admin person, whose console edit the audit trail shows with their email', async () => {
    const { page } = ada;
    await signIn(page, 'ada');
    await page.getByRole('heading', { level: 1, name: 'User groups' }).waitFor();
    await page.getByText('Signed in as').getByText('ada@example.com').waitFor();
    await page.getByRole('link', { name: 'Acme' }).first().click();
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Acme Corporation');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved acme.').waitFor();

    await page.goto(`${server.baseUrl}/console/audit`);
    await page.getByRole('heading', { level: 1, name: 'Audit trail' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: 'user_group.updated' }).first();
    await row.getByRole('link', { name: 'ada@example.com' }).waitFor();
    await expectNoSeriousAxeViolations(page, 'audit trail with a person');

    const filtered = await send(server.baseUrl, {
      method: 'GET',
      path: `/api/admin/audit_events?person_issuer=${encodeURIComponent(idp.issuer)}&person_sub=ada&action=user_group.updated`,
      token: admin,
    });
    expect(filtered.status, filtered.raw).toBe(200);
    expect(filtered.body.audit_events.map((event: { actor: unknown }) => event.actor)).toEqual([
      { type: 'person', issuer: idp.issuer, sub: 'ada', email: 'ada@example.com' },
    ]);
    await page.goto(`${server.baseUrl}/console/audit?person_issuer=${encodeURIComponent(idp.issuer)}&person_sub=ada`);
    await page.getByRole('row').filter({ hasText: 'user_group.updated' }).first().waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'command line' }).count()).toBe(0);
  });

  it("lists people's sessions for an admin person, who ends one: refused from its next request", async () => {
    // A second session of Ada's, in another browser: the newest, so the first row.
    const elsewhere = await personBrowser();
    await signIn(elsewhere.page, 'ada');
    await elsewhere.page.getByRole('heading', { level: 1, name: 'User groups' }).waitFor();

    const { page } = ada;
    await page.goto(`${server.baseUrl}/console/groups`);
    await page.getByRole('link', { name: "People's sessions" }).click();
    await page.getByRole('heading', { level: 1, name: "People's sessions" }).waitFor();
    const rows = page.getByRole('row').filter({ hasText: 'ada@example.com' });
    await rows.nth(1).waitFor();
    expect(await rows.count()).toBe(2);
    await expectNoSeriousAxeViolations(page, "people's sessions");
    await screenshot(page, 'people-sessions');

    const newest = rows.first();
    await newest.getByRole('button', { name: /^End session \d+ of ada@example\.com$/ }).click();
    await page.getByRole('button', { name: 'End session', exact: true }).click();
    await page.getByText(/^Ended console session \d+ of ada@example\.com\.$/).waitFor();
    await rows.nth(1).waitFor({ state: 'detached' });
    const ended = await elsewhere.context.request.get(`${server.baseUrl}/console/session`);
    expect(ended.status()).toBe(401);
    // This page's own session goes on.
    expect((await page.context().request.get(`${server.baseUrl}/console/session`)).status()).toBe(200);
    await elsewhere.context.close();
  });

  it('signs the admin person out of the console and, through RP-initiated logout, of the provider', async () => {
    const { page, context } = ada;
    await page.goto(`${server.baseUrl}/console/groups`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Yes, sign me out' }).click();
    await page.getByRole('link', { name: 'Sign in with your identity provider' }).waitFor();
    expect(page.url()).toBe(`${server.baseUrl}/console/`);
    const session = await context.request.get(`${server.baseUrl}/console/session`);
    expect((await session.json()).session).toBeNull();
    // The provider's session ended too: signing in again asks for the login.
    await page.getByRole('link', { name: 'Sign in with your identity provider' }).click();
    await page.locator('input[name="login"]').waitFor();
  });

  it('shows a read-only person no edit controls, and the API refuses their write', async () => {
    const { page, context } = rita;
    await signIn(page, 'rita');
    await page.getByRole('heading', { level: 1, name: 'User groups' }).waitFor();
    expect(await page.getByRole('link', { name: 'New group' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Acme' }).first().click();
    await page.getByRole('heading', { level: 1 }).filter({ hasText: 'Acme' }).waitFor();
    expect(await page.getByRole('button', { name: 'Edit' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    await expectNoSeriousAxeViolations(page, 'read-only group');

    const csrf = (await (await context.request.get(`${server.baseUrl}/console/session`)).json()).session.csrf_token;
    const write = await context.request.put(`${server.baseUrl}/api/user`, {
      headers: { 'x-csrf-token': csrf, 'content-type': 'application/json' },
      data: { user_group_id: 'acme', name: 'Mine now' },
    });
    expect(write.status()).toBe(403);
    expect((await write.json()).error.code).toBe('insufficient_scope');
  });

  it('refuses a person in no mapped group with a page that says why', async () => {
    const gus = await personBrowser();
    await signIn(gus.page, 'gus');
    await gus.page.getByRole('heading', { level: 1, name: 'You have no access to this console' }).waitFor();
    await gus.page.getByText('sent no "groups" claim').waitFor();
    await expectNoSeriousAxeViolations(gus.page, 'oidc refusal');
    await screenshot(gus.page, 'oidc-refusal');
    await gus.context.close();
  });

  it('takes away the access of a group removed at the provider when the session renews', async () => {
    const { page } = rita;
    idp.people.set('rita', { email: 'rita@example.com', groups: [] });
    // The renewal falls due (PERSON_SESSION_RENEWAL_MS after sign-in): made due now rather than waited for.
    const file = new Database(db.sqlitePath!);
    file.prepare("UPDATE person_sessions SET renew_at = '2000-01-01T00:00:00.000Z' WHERE subject = 'rita'").run();
    file.close();
    await page.goto(`${server.baseUrl}/console/groups`);
    await page.getByRole('link', { name: 'Sign in with your identity provider' }).click();
    // The provider's session is still there: no login page, straight back with the new groups.
    await page.getByRole('heading', { level: 1, name: 'You have no access to this console' }).waitFor();
  });
});
