// The admin console (docs/security.md#admin-console-sessions) in a real browser against a real `ugs serve`: Debian's
// Chromium through playwright-core, each screen checked with axe and photographed with real data.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../support/http-client.js';
import { startServeProcess, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { expectNoSeriousAxeViolations, launchChromium, screenshot } from './browser.js';

let db: TestDatabase;
let server: ServeProcess;
let admin: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Uncaught errors of the page and the CSP refusals it logged (a refusal the API answers is logged too, and is no error). */
const pageErrors: string[] = [];
/** Every error the page logged to the browser's console, with the address it was about (a failed request's). */
const consoleErrors: string[] = [];

const api = async (method: string, path: string, body?: unknown, token = admin) => {
  const response = await send(server.baseUrl, { method, path, token, ...(body === undefined ? {} : { body }) });
  if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${response.raw}`);
  return response.body;
};

/** Real data for every screen: schemas, data sources, a tree of groups, a webhook endpoint whose deliveries fail. */
async function seed(): Promise<void> {
  await api('POST', '/api/admin/schemas', { name: 'sales' });
  await api('POST', '/api/admin/schemas', { name: 'marketing' });
  await api('POST', '/api/admin/data_sources', { provided_id: 'warehouse_eu', name: 'EU warehouse', schema_id: 1 });
  await api('POST', '/api/admin/data_sources', { provided_id: 'warehouse_us', name: 'US warehouse', schema_id: 1 });
  await api('POST', '/api/admin/data_sources', { provided_id: 'crm_eu', name: 'CRM (EU)', schema_id: 2 });
  // Created before the groups, so that their changes are queued for it (and fail: nothing listens on port 9).
  await api('POST', '/api/admin/webhook_endpoints', {
    url: 'http://127.0.0.1:9/hooks/ugs',
    events: ['*'],
    description: 'CRM sync',
  });
  const groups = [
    {
      user_group_id: 'acme',
      name: 'Acme Corporation',
      properties: { plan: 'enterprise', region: 'global', seats: 250 },
      mapping: { 1: 'warehouse_eu', 2: 'crm_eu' },
      tags: ['enterprise'],
      access_rules: [{ schema_id: 1, table: 'orders', column: 'plan', op: 'eq', value: { property: 'plan' } }],
    },
    {
      user_group_id: 'acme-emea',
      name: 'Acme EMEA',
      parent_user_group_id: 'acme',
      properties: { region: 'emea' },
      tags: ['emea', 'pilot'],
      is_demo_group: true,
      access_rules: [{ schema_id: 1, table: 'orders', column: 'region', op: 'in', value: ['emea', 'eu'] }],
    },
    {
      user_group_id: 'acme-emea-paris',
      name: 'Acme Paris office',
      parent_user_group_id: 'acme-emea',
      properties: { city: 'Paris' },
    },
    {
      user_group_id: 'acme-us',
      name: 'Acme US',
      parent_user_group_id: 'acme',
      properties: { region: 'us' },
      mapping: { 1: 'warehouse_us' },
    },
    {
      user_group_id: 'globex',
      name: 'Globex',
      properties: { plan: 'team' },
      mapping: { 1: 'warehouse_us' },
      tags: ['smb'],
    },
    { user_group_id: 'initech', name: 'Initech', properties: { plan: 'starter' } },
    {
      user_group_id: 'umbrella',
      name: 'Umbrella Health',
      properties: { plan: 'enterprise', hipaa: true },
      tags: ['enterprise', 'healthcare'],
    },
  ];
  for (const group of groups) {
    const query = new URLSearchParams(
      Object.entries(group).map(([key, value]): [string, string] => [
        key,
        typeof value === 'string' ? value : JSON.stringify(value),
      ]),
    );
    await api('GET', `/api/user?${query.toString()}`);
  }
  await api('POST', '/api/admin/api_tokens', { name: 'backend', scope: 'write' });
  await api('POST', '/api/admin/api_tokens', { name: 'dashboard renderer', scope: 'read' });
  await api('POST', '/api/user/embed_token', { user_group_id: 'acme' }); // the workspace's first signing key
  // Usage (docs/api.md#usage-per-group): acme read most, then globex; the server writes the counts every 200 ms.
  for (let i = 0; i < 20; i++) await api('GET', '/api/user?user_group_id=acme');
  for (let i = 0; i < 8; i++) await api('GET', '/api/user?user_group_id=globex');
}

async function open(path: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: path }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

/** Each screen: no serious accessibility violation, and a screenshot with its data. */
async function check(name: string): Promise<void> {
  await expectNoSeriousAxeViolations(page, name);
  await screenshot(page, name);
}

/** The sync screen's file field, given a file as if chosen in the browser's dialog; waits until the page has read it. */
async function chooseSyncFile(name: string, text: string): Promise<void> {
  await page
    .getByLabel('File', { exact: true })
    .setInputFiles({ name, mimeType: 'application/x-ndjson', buffer: Buffer.from(text) });
  await page.getByText(`Read ${name}`).waitFor();
}

/** The sync screen after a dry run: the sentence the status region announced, then the counts shown. */
async function expectDryRun(announced: string, counts: string[]): Promise<void> {
  await page.getByRole('status').getByText(announced).waitFor();
  const shown = page.getByRole('list', { name: 'What the sync would do' }).getByRole('listitem');
  expect(await shown.allTextContents()).toEqual(counts);
}

describe('admin console in Chromium', () => {
  beforeAll(async () => {
    db = await createTestDatabase('sqlite');
    server = await startServeProcess(db, {
      env: { UGS_WEBHOOK_ALLOW_PRIVATE: 'true', UGS_WEBHOOK_RETRY_DELAYS_MS: '50,50', UGS_USAGE_FLUSH_MS: '200' },
    });
    admin = server.adminTokens().Customer;
    await seed();
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() !== 'error') return;
      consoleErrors.push(`${message.text()} (${message.location().url})`);
      if (/Content Security Policy/i.test(message.text())) pageErrors.push(message.text());
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await db?.drop();
  });

  it(
    'signs in with an admin token, which the browser does not keep, logging no error; the session cookie is HttpOnly and SameSite=Strict',
    { timeout: 60_000 },
    async () => {
      consoleErrors.length = 0;
      await page.goto(`${server.baseUrl}/console/`);
      await page.getByLabel('Admin API token').waitFor();
      await check('01-sign-in');
      await page.getByLabel('Admin API token').fill(admin);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'User groups' }).waitFor();
      await page.getByRole('region', { name: 'User groups found' }).getByRole('row').nth(1).waitFor();
      // The sign-in page asked for the session (none yet: an answer, not a 401) and the groups loaded.
      expect(consoleErrors).toEqual([]);

      const [cookie] = await context.cookies();
      expect(cookie).toMatchObject({ name: 'ugs_console', httpOnly: true, sameSite: 'Strict', path: '/' });
      expect(cookie!.value).not.toContain(admin);
      const stored = await page.evaluate(
        'JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie })',
      );
      expect(stored).toBe(JSON.stringify({ local: {}, session: {}, cookie: '' }));
      expect(await page.content()).not.toContain(admin);
    },
  );

  it('lists the groups and finds them by search, filter and page', { timeout: 60_000 }, async () => {
    const rows = page.getByRole('region', { name: 'User groups found' }).getByRole('row');
    await expect.poll(() => rows.count()).toBe(8); // a header and seven groups
    await check('02-groups');

    await page.getByLabel('Search').fill('acme-e');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => rows.count()).toBe(3);
    await expect.poll(() => rows.nth(1).textContent()).toContain('acme-emea');

    await page.getByLabel('Search').fill('');
    await page.getByLabel('Tag').fill('enterprise');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect
      .poll(() => rows.allTextContents())
      .toEqual([
        expect.stringContaining('User group id'),
        expect.stringContaining('acme'),
        expect.stringContaining('umbrella'),
      ]);

    await page.getByLabel('Tag').fill('');
    await page.getByLabel('Parent').fill('acme');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => rows.count()).toBe(3); // acme-emea and acme-us
  });

  it('opens a group: every field, computed values, children and audit history', { timeout: 60_000 }, async () => {
    await page.getByRole('link', { name: 'acme-emea', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Acme EMEA' }).waitFor();
    const computed = page.getByRole('table', { name: 'Computed properties' });
    await expect
      .poll(() => computed.getByRole('row').allTextContents())
      .toEqual([
        expect.stringContaining('Property'),
        expect.stringMatching(/plan.*"enterprise".*inherited from acme$/),
        expect.stringMatching(/region.*"emea".*this group$/),
        expect.stringMatching(/seats.*250.*inherited from acme$/),
      ]);
    expect(await page.getByRole('region', { name: /Children/ }).textContent()).toContain('acme-emea-paris');
    expect(await page.getByRole('table', { name: 'Audit history of acme-emea' }).textContent()).toContain(
      'user_group.created',
    );
    await check('03-group-view');

    // Two levels down, each value names the nearest ancestor that sets it, and links to it.
    await page.getByRole('link', { name: 'acme-emea-paris', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Acme Paris office' }).waitFor();
    await expect
      .poll(() => page.getByRole('table', { name: 'Computed properties' }).getByRole('row').allTextContents())
      .toEqual([
        expect.stringContaining('Property'),
        expect.stringMatching(/plan.*"enterprise".*inherited from acme$/),
        expect.stringMatching(/region.*"emea".*inherited from acme-emea$/),
        expect.stringMatching(/seats.*250.*inherited from acme$/),
        expect.stringMatching(/city.*"Paris".*this group$/),
      ]);
    await expect
      .poll(() =>
        page
          .getByRole('table', { name: /Computed mapping/ })
          .getByRole('row')
          .allTextContents(),
      )
      .toEqual([
        expect.stringContaining('Schema id'),
        expect.stringMatching(/^1.*warehouse_eu.*inherited from acme$/),
        expect.stringMatching(/^2.*crm_eu.*inherited from acme$/),
      ]);
    await page
      .getByRole('table', { name: 'Computed properties' })
      .getByRole('link', { name: 'acme-emea', exact: true })
      .click();
    await page.getByRole('heading', { level: 1, name: 'Acme EMEA' }).waitFor();
  });

  it(
    "edits properties: the API's refusal shows at the field, then a valid value is saved",
    { timeout: 60_000 },
    async () => {
      await page.getByRole('button', { name: 'Edit' }).click();
      const properties = page.getByLabel('Properties', { exact: true });
      await properties.fill('["not", "an", "object"]');
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => properties.getAttribute('aria-invalid')).toBe('true');
      const describedBy = (await properties.getAttribute('aria-describedby'))!
        .split(' ')
        .find((id) => id.endsWith('-error'))!;
      expect(await page.locator(`[id="${describedBy}"]`).textContent()).toMatch(/properties|object/i);
      await check('04-group-edit-error');

      await properties.fill('{"region": "emea", "tier": "gold"}');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').getByText('Saved acme-emea.').waitFor();
      await expect
        .poll(() => page.getByRole('table', { name: 'Computed properties' }).textContent())
        .toContain('"gold"');
      const group = (await api('GET', '/api/admin/user_groups?q=acme-emea&limit=1')).user_groups[0];
      expect(group.properties).toEqual({ region: 'emea', tier: 'gold' });
    },
  );

  it(
    "shows a group's effective access rules with where each comes from, and edits its own with the API's error at the field",
    { timeout: 60_000 },
    async () => {
      const effective = page.getByRole('table', { name: /Effective access rules/ });
      await expect
        .poll(() => effective.getByRole('row').allTextContents())
        .toEqual([
          expect.stringContaining('Schema'),
          expect.stringMatching(/^1orders.*plan.*eq.*\{"property":"plan"\}.*inherited from acme$/),
          expect.stringMatching(/^1orders.*region.*in.*\["emea","eu"\].*this group$/),
        ]);
      await check('04b-group-access-rules');

      await page.getByRole('button', { name: 'Edit' }).click();
      const rules = page.getByLabel('Access rules', { exact: true });
      await rules.fill('[{"schema_id": 1, "table": "orders", "column": "region; --", "op": "eq", "value": "emea"}]');
      await page.getByRole('button', { name: 'Save' }).click();
      await expect.poll(() => rules.getAttribute('aria-invalid')).toBe('true');
      const describedBy = (await rules.getAttribute('aria-describedby'))!
        .split(' ')
        .find((id) => id.endsWith('-error'))!;
      expect(await page.locator(`[id="${describedBy}"]`).textContent()).toContain('access_rules[0].column');
      await check('04c-group-access-rules-error');

      await rules.fill('[{"schema_id": 1, "table": "orders", "column": "region", "op": "eq", "value": "emea"}]');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').getByText('Saved acme-emea.').waitFor();
      await expect
        .poll(() => effective.getByRole('row').allTextContents())
        .toEqual([
          expect.stringContaining('Schema'),
          expect.stringMatching(/inherited from acme$/),
          expect.stringMatching(/^1orders.*region.*eq.*"emea".*this group$/),
        ]);
      const group = (await api('GET', '/api/admin/user_groups?q=acme-emea&limit=1')).user_groups[0];
      expect(group.access_rules).toEqual([
        { schema_id: 1, table: 'orders', column: 'region', op: 'eq', value: 'emea' },
      ]);
    },
  );

  it(
    'reveals the token on demand, rotates it after a confirmation, and the old token is refused by /api/user/verify',
    { timeout: 60_000 },
    async () => {
      const token = page.getByTestId('group-token');
      expect(await token.textContent()).not.toMatch(/ugt_[0-9a-f]{64}/);
      await page.getByRole('button', { name: 'Reveal token' }).click();
      const oldToken = (await token.textContent())!;
      expect(oldToken).toMatch(/^ugt_[0-9a-f]{64}$/);

      await page.getByRole('button', { name: 'Rotate token' }).click();
      const dialog = page.getByRole('dialog', { name: 'Rotate the token?' });
      await dialog.waitFor();
      await check('05-rotate-confirmation');
      await dialog.getByRole('button', { name: 'Rotate token' }).click();
      await page
        .getByRole('status')
        .getByText(/Rotated the token of acme-emea/)
        .waitFor();
      await expect.poll(() => token.textContent()).not.toBe(oldToken);
      const newToken = (await token.textContent())!;

      const old = await send(server.baseUrl, {
        method: 'POST',
        path: '/api/user/verify',
        token: admin,
        body: { token: oldToken },
      });
      expect([old.status, old.body.error.code]).toEqual([404, 'user_group_not_found']);
      const current = await send(server.baseUrl, {
        method: 'POST',
        path: '/api/user/verify',
        token: admin,
        body: { token: newToken },
      });
      expect([current.status, current.body.user_group.provided_id]).toEqual([200, 'acme-emea']);
    },
  );

  it('mints an embed token and shows its decoded claims', { timeout: 60_000 }, async () => {
    await page.getByLabel('Embed id').fill('sales-dashboard');
    await page.getByRole('button', { name: 'Mint embed token' }).click();
    const claims = page.getByLabel('Embed token claims');
    await claims.waitFor();
    const decoded = JSON.parse((await claims.textContent())!);
    expect(decoded).toMatchObject({
      sub: 'acme-emea',
      aud: 'sales-dashboard',
      ugs: { environment: 'Customer', is_demo_group: true },
    });
    expect(decoded.ugs.properties).toMatchObject({ plan: 'enterprise', region: 'emea', tier: 'gold' });
    await check('06-group-embed-token');
  });

  it(
    'creates an API token whose secret is shown once, and lists it without the secret',
    { timeout: 60_000 },
    async () => {
      await open('API tokens', 'API tokens');
      await page.getByLabel('Name').fill('nightly export');
      await page.getByLabel('Scope').selectOption('read');
      await page.getByRole('button', { name: 'Create token' }).click();
      const secret = (await page.getByTestId('once-secret').textContent())!;
      expect(secret).toMatch(/^ugs_live_[0-9a-f]{64}$/);
      await check('07-api-token-created');
      const works = await send(server.baseUrl, {
        method: 'GET',
        path: '/api/user?user_group_id=globex',
        token: secret,
      });
      expect([works.status, works.body.user_group.provided_id]).toEqual([200, 'globex']);

      await page.getByRole('button', { name: 'I have stored it' }).click();
      await page.getByRole('cell', { name: 'nightly export', exact: true }).waitFor();
      expect(await page.content()).not.toContain(secret);
      await page.reload();
      await page.getByRole('cell', { name: 'nightly export', exact: true }).waitFor();
      expect(await page.content()).not.toContain(secret);
      await check('08-api-tokens');
    },
  );

  it('reads the audit trail entry of the change, with who made it', { timeout: 60_000 }, async () => {
    await open('Audit trail', 'Audit trail');
    await page.getByLabel('Action').fill('user_group.updated');
    await page.getByRole('button', { name: 'Filter' }).click();
    const rows = page.getByRole('table', { name: 'Audit events, newest first' }).getByRole('row');
    // The change of properties, and the newer change of access rules (the test before them).
    await expect.poll(() => rows.count()).toBe(3);
    expect(await rows.nth(1).textContent()).toMatch(
      /access_rules: \[.*"column":"region","op":"in".*\] → \[.*"op":"eq"/,
    );
    const entry = (await rows.nth(2).textContent())!;
    expect(entry).toContain('acme-emea');
    expect(entry).toContain('first-start admin (Customer)');
    expect(entry).toMatch(/properties: \{"region":"emea"\} → \{"region":"emea","tier":"gold"\}/);
    await check('09-audit-trail');
  });

  it(
    'creates a group, and shows schemas, data sources, webhooks with their deliveries, signing keys and the status',
    { timeout: 90_000 },
    async () => {
      await open('User groups', 'User groups');
      await page.getByRole('link', { name: 'New group' }).click();
      await page.getByRole('heading', { level: 1, name: 'New user group' }).waitFor();
      await check('10-new-group');
      await page.getByLabel('User group id').fill('hooli');
      await page.getByLabel('Name').fill('Hooli');
      await page.getByLabel('Parent').fill('globex');
      await page.getByRole('button', { name: 'Create' }).click();
      await page.getByRole('heading', { level: 1, name: 'Hooli' }).waitFor();
      await page.getByRole('status').getByText('Created hooli.').waitFor();
      await expect
        .poll(() => page.getByRole('table', { name: 'Computed properties' }).textContent())
        .toMatch(/plan"team"inherited from globex/);

      await open('Schemas', 'Schemas');
      await page.getByRole('cell', { name: 'marketing' }).waitFor();
      await check('11-schemas');

      await open('Data sources', 'Data sources');
      await page.getByRole('cell', { name: 'EU warehouse' }).waitFor();
      await check('12-data-sources');

      await open('Webhooks', 'Webhooks');
      await page.getByText('http://127.0.0.1:9/hooks/ugs').waitFor();
      await page
        .getByRole('table', { name: 'Webhook deliveries' })
        .getByRole('cell', { name: 'failed' })
        .first()
        .waitFor();
      await check('13-webhooks');

      await open('Signing keys', 'Signing keys');
      await page.getByRole('cell', { name: 'current', exact: true }).waitFor();
      await check('14-signing-keys');

      await open('Status', 'Status');
      await page.getByText('reachable').waitFor();
      expect(await page.getByRole('list', { name: 'Counts in Customer' }).textContent()).toContain('8User groups');
      await check('15-status');
    },
  );

  it('reads from 1280 px down to 800 px without scrolling sideways', { timeout: 60_000 }, async () => {
    await open('User groups', 'User groups');
    await page.getByRole('link', { name: 'acme', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Acme Corporation' }).waitFor();
    for (const width of [1280, 1024, 800]) {
      await page.setViewportSize({ width, height: 900 });
      expect(await page.evaluate('document.documentElement.scrollWidth'), `${width} px`).toBeLessThanOrEqual(width);
    }
    await check('16-group-view-800px');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it(
    'works with the keyboard alone: search, open a group, and a confirmation that Escape cancels',
    { timeout: 60_000 },
    async () => {
      const focused = () =>
        page.evaluate(
          'document.activeElement && `${document.activeElement.tagName} ${document.activeElement.textContent}`',
        );
      const tabTo = async (wanted: RegExp) => {
        for (let presses = 0; presses < 30 && !wanted.test(String(await focused())); presses++)
          await page.keyboard.press('Tab');
        expect(String(await focused())).toMatch(wanted);
      };
      await open('User groups', 'User groups');
      await page.getByLabel('Search').focus();
      await page.keyboard.type('glob');
      await page.keyboard.press('Enter');
      await page.getByRole('link', { name: 'globex', exact: true }).waitFor();
      await tabTo(/^A globex$/);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 1, name: 'Globex' }).waitFor();
      const token = await send(server.baseUrl, { method: 'GET', path: '/api/user?user_group_id=globex', token: admin });

      await tabTo(/^BUTTON Rotate token$/);
      await page.keyboard.press('Enter');
      await page.getByRole('dialog', { name: 'Rotate the token?' }).waitFor();
      expect(await focused()).toBe('BUTTON Cancel'); // a stray Enter never confirms
      await page.keyboard.press('Escape');
      await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
      const after = await send(server.baseUrl, { method: 'GET', path: '/api/user?user_group_id=globex', token: admin });
      expect(after.body.user_group.token).toBe(token.body.user_group.token);
    },
  );

  it(
    "charts the busiest groups and a group's last 30 days: dates shown, names as stored, axes labelled, every bar named",
    { timeout: 60_000 },
    async () => {
      await open('Usage', 'Usage');
      const heading = page.getByRole('heading', { level: 2, name: /^Busiest groups by/ });
      const from = page.getByLabel('From (UTC day)');
      const to = page.getByLabel('To (UTC day)');
      /** The range the heading names, and the values of the date fields: the same two days. */
      const shownRange = async () => {
        const [, since, until] = /, (\d{4}-\d{2}-\d{2}) to (\d{4}-\d{2}-\d{2})$/.exec(
          (await heading.textContent()) ?? '',
        ) ?? [undefined, 'no range', 'no range'];
        return { heading: [since, until], fields: [await from.inputValue(), await to.inputValue()] };
      };
      // The default range (30 days to today) is in the fields, not only in the heading.
      await heading.waitFor();
      await expect.poll(async () => (await shownRange()).fields).not.toEqual(['', '']);
      const initial = await shownRange();
      expect(initial.fields).toEqual(initial.heading);
      expect((Date.parse(initial.heading[1]!) - Date.parse(initial.heading[0]!)) / 86_400_000).toBe(29);

      // A range chosen: the heading follows it, and the fields keep it.
      const earlier = new Date(Date.parse(initial.heading[0]!) - 7 * 86_400_000).toISOString().slice(0, 10);
      await page.getByLabel('Busiest by').selectOption('reads');
      await from.fill(earlier);
      await page.getByRole('button', { name: 'Show' }).click();
      await expect.poll(async () => (await shownRange()).heading).toEqual([earlier, initial.heading[1]]);
      expect((await shownRange()).fields).toEqual([earlier, initial.heading[1]]);
      const rows = page.getByRole('table', { name: /^Usage of the busiest groups/ }).getByRole('row');
      await expect
        .poll(async () => (await rows.allTextContents()).slice(1, 3))
        .toEqual([expect.stringMatching(/^Acme Corporation/), expect.stringMatching(/^Globex/)]);
      // A name is shown as stored, lower-case letters and all (innerText is what the page renders).
      expect(await rows.nth(1).getByRole('rowheader').innerText()).toBe('Acme Corporation');

      // The chart on its own: both axes named, ticks on the value axis, each bar named by its group and value.
      const chart = page.getByRole('group', { name: 'Reads per group, busiest first' });
      expect(await chart.locator('.usage-axis-title').allTextContents()).toEqual(['Group', 'Reads']);
      expect(await chart.locator('.usage-tick').allTextContents()).toContain('0');
      const bars = chart.getByRole('img');
      expect(await bars.count()).toBe((await rows.count()) - 1);
      for (const index of [1, 2]) {
        const name = await rows.nth(index).getByRole('rowheader').innerText();
        const reads = await rows.nth(index).getByRole('cell').nth(2).textContent();
        expect(await bars.nth(index - 1).getAttribute('aria-label')).toBe(`${name}, reads: ${reads}`);
        expect(
          await bars
            .nth(index - 1)
            .locator('.usage-bar-label')
            .textContent(),
        ).toBe(name);
      }
      // By keyboard: the bars are one Tab stop after the form; the arrow keys go from bar to bar.
      const focusedName = async () =>
        String(await page.evaluate("document.activeElement && document.activeElement.getAttribute('aria-label')"));
      await page.getByRole('button', { name: 'Show' }).focus();
      await page.keyboard.press('Tab');
      expect(await focusedName()).toMatch(/^Acme Corporation, reads: \d+$/);
      await page.keyboard.press('ArrowDown');
      expect(await focusedName()).toMatch(/^Globex, reads: \d+$/);
      await page.keyboard.press('Tab');
      expect(await focusedName()).not.toMatch(/, reads: /); // Tab leaves the chart
      await check('17-usage');

      // A group's page: its last 30 days charted by day, the numbers behind a disclosure reached by keyboard.
      await rows.nth(1).getByRole('link', { name: 'Acme Corporation' }).click();
      await page.getByRole('heading', { level: 1, name: 'Acme Corporation' }).waitFor();
      const today = new Date().toISOString().slice(0, 10);
      const days = page.getByRole('group', { name: /^Verifications per day, / });
      await days.waitFor();
      expect(await days.locator('.usage-axis-title').allTextContents()).toEqual(['Verifications', 'Day (UTC)']);
      expect(await days.getByRole('img').count()).toBe(30);
      expect(await days.getByRole('img').nth(29).getAttribute('aria-label')).toMatch(
        new RegExp(`^${today}, verifications: \\d+$`),
      );
      const summary = page.getByText('The numbers, day by day');
      await summary.focus();
      await page.keyboard.press('Enter');
      const table = page.getByRole('table', { name: /^Usage per UTC day/ }).getByRole('row');
      await expect.poll(() => table.count()).toBe(31);
      expect(await table.nth(30).textContent()).toMatch(new RegExp(`^${today}`));
      expect(Number((await table.nth(30).getByRole('cell').nth(2).textContent()) ?? 0)).toBeGreaterThanOrEqual(20);
      await check('18-group-usage');
    },
  );

  it(
    'syncs from a file: the dry run shows the counts and each change, Apply only after it, then a second plan has nothing to do',
    { timeout: 90_000 },
    async () => {
      // A group the prune tag marks and the file leaves out: the plan deletes it.
      await api('GET', `/api/user?user_group_id=wayne&name=Wayne&tags=${encodeURIComponent('["synced"]')}`);
      const file = [
        { user_group_id: 'initech', name: 'Initech Inc', properties: { plan: 'business' }, tags: ['synced'] },
        { user_group_id: 'stark', name: 'Stark Industries', properties: { plan: 'enterprise' }, tags: ['synced'] },
        { user_group_id: 'stark-labs', name: 'Stark Labs', parent_user_group_id: 'stark', tags: ['synced'] },
      ]
        .map((group) => JSON.stringify(group))
        .join('\n');
      await open('Sync', 'Sync user groups');
      const apply = page.getByRole('button', { name: 'Apply' });
      expect(await apply.isDisabled()).toBe(true);
      await chooseSyncFile('groups.ndjson', file);
      await page.getByLabel('Prune tag (optional)').fill('synced');
      await page.keyboard.press('Enter'); // the form's first button: the dry run
      await expectDryRun(
        'Dry run in Customer: 2 to create, 1 to update, 0 unchanged, 1 to delete. Nothing was changed.',
        ['2To create', '1To update', '0Unchanged', '1To delete'],
      );
      const rows = page.getByRole('table', { name: 'Changes planned for Customer' }).getByRole('row');
      expect(await rows.allTextContents()).toEqual([
        expect.stringContaining('Changes (before → after)'),
        expect.stringMatching(
          /^line 1initechupdatename: "Initech" → "Initech Inc"properties: \{"plan":"starter"\} → \{"plan":"business"\}tags: \[\] → \["synced"\]$/,
        ),
        expect.stringMatching(/^line 2starkcreate.*name: null → "Stark Industries"/),
        expect.stringMatching(/^line 3stark-labscreate.*parent_user_group_id: null → "stark"/),
        expect.stringMatching(/^not in the filewaynedelete.*name: "Wayne" → null/),
      ]);
      expect(await page.content()).not.toMatch(/ugt_[0-9a-f]{64}/);
      expect((await api('GET', '/api/admin/user_groups?q=stark')).user_groups).toEqual([]);
      expect(await apply.isDisabled()).toBe(false);
      await check('19-sync-plan');

      // Another prune tag is another sync: the plan no longer stands for it.
      await page.getByLabel('Prune tag (optional)').fill('other');
      expect(await apply.isDisabled()).toBe(true);
      await page.getByLabel('Prune tag (optional)').fill('synced');
      expect(await apply.isDisabled()).toBe(false);

      await apply.click();
      await page
        .getByRole('status')
        .getByText(/^Applied in Customer: 2 created, 1 updated, 0 unchanged, 1 deleted \(sync_[0-9a-f]{24}\)\.$/)
        .waitFor();
      await page.getByRole('heading', { level: 2, name: 'Applied in Customer' }).waitFor();
      const applied = page.getByRole('table', { name: 'Changes applied in Customer' });
      expect(await applied.getByRole('row').count()).toBe(5);
      expect(await applied.getByRole('link', { name: 'wayne' }).count()).toBe(0); // deleted: no page to open
      expect(await apply.isDisabled()).toBe(true);
      const labs = (await api('GET', '/api/admin/user_groups?q=stark-labs')).user_groups[0];
      expect(labs).toMatchObject({ name: 'Stark Labs', parent_user_group_id: 'stark', tags: ['synced'] });
      expect((await api('GET', '/api/admin/user_groups?q=wayne')).user_groups).toEqual([]);
      await check('20-sync-applied');

      await page.getByRole('button', { name: 'Plan (dry run)' }).click();
      await expectDryRun('Dry run in Customer: nothing to do, all 3 groups already match the file.', [
        '0To create',
        '0To update',
        '3Unchanged',
        '0To delete',
      ]);
      expect(await page.getByRole('table', { name: /^Changes planned/ }).count()).toBe(0);
      await page.getByText('Unchanged: 3 groups').click();
      await page.getByText('initech, stark, stark-labs').waitFor();
      expect(await apply.isDisabled()).toBe(true);
    },
  );

  it(
    'refuses a file with an invalid group, naming its line (or item) and the group, and changes nothing; a dropped file is read too',
    { timeout: 60_000 },
    async () => {
      const groupsBefore = (await api('GET', '/api/admin/user_groups?limit=1000')).user_groups;
      const invalid = `${JSON.stringify({ user_group_id: 'oscorp', name: 'Oscorp' })}\n${JSON.stringify({ user_group_id: 'oscorp-labs', name: '' })}\n`;
      await chooseSyncFile('invalid.ndjson', invalid);
      await page.getByRole('button', { name: 'Plan (dry run)' }).click();
      const alert = page.getByRole('alert');
      await alert.getByText('The file was refused; nothing was changed.').waitFor();
      expect(await alert.textContent()).toMatch(/Line 2, group “oscorp-labs”: .*name/);
      expect(await page.getByRole('button', { name: 'Apply' }).isDisabled()).toBe(true);
      await check('21-sync-refused');

      // Dropped on the field: a JSON array, whose refusal names the item (from 0).
      const array = JSON.stringify([{ user_group_id: 'oscorp' }, { user_group_id: 'oscorp-labs', tags: 'labs' }]);
      const dropped = await page.evaluateHandle(
        `(() => { const transfer = new DataTransfer(); transfer.items.add(new File([${JSON.stringify(array)}], 'dropped.json', { type: 'application/json' })); return transfer; })()`,
      );
      await page.locator('.drop-zone').dispatchEvent('drop', { dataTransfer: dropped });
      await page.getByText('Read dropped.json').waitFor();
      await page.getByRole('button', { name: 'Plan (dry run)' }).click();
      await expect.poll(() => alert.textContent()).toMatch(/Item 1, group “oscorp-labs”: .*tags/);
      expect((await api('GET', '/api/admin/user_groups?limit=1000')).user_groups).toEqual(groupsBefore);
    },
  );

  it('shows the not-found view for a console URL with a malformed percent-encoding', { timeout: 60_000 }, async () => {
    await page.goto(`${server.baseUrl}/console/groups/%E0%A4%A`);
    await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
    expect(await page.getByRole('link', { name: 'Go to the user groups.' }).count()).toBe(1);
  });

  it(
    'signs out: the session is over, and its cookie is refused by the console and the API',
    { timeout: 60_000 },
    async () => {
      const [cookie] = await context.cookies();
      const csrf = await send(server.baseUrl, {
        method: 'GET',
        path: '/console/session',
        headers: { cookie: `ugs_console=${cookie!.value}` },
      });
      expect(csrf.status).toBe(200);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('Admin API token').waitFor();
      expect(await context.cookies()).toEqual([]);

      const headers = { cookie: `ugs_console=${cookie!.value}`, 'x-csrf-token': csrf.body.session.csrf_token };
      const session = await send(server.baseUrl, { method: 'GET', path: '/console/session', headers });
      const apiCall = await send(server.baseUrl, { method: 'GET', path: '/api/admin/schemas', headers });
      expect([session.status, apiCall.status, apiCall.body.error.code]).toEqual([401, 401, 'unauthenticated']);
      await page.goto(`${server.baseUrl}/console/groups`);
      await page.getByLabel('Admin API token').waitFor();
    },
  );

  it('kept to its Content-Security-Policy: the page logged no error', () => {
    expect(pageErrors).toEqual([]);
  });
});
