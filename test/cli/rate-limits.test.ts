// Per-token rate limits from the command line, the server's own setting, and a running server
// applying a change made by the CLI from the token's next request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEventCount, cleanUp, type Sandbox, sandbox } from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput, runUgs } from '../support/ugs-command.js';

interface ListedToken {
  id: number;
  name: string;
  rate_limit: { per_second: number; burst: number } | null;
}

interface AuditEvent {
  action: string;
  actor: string;
  changes: Record<string, { before: unknown; after: unknown }>;
}

const RATE_LIMIT_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy'];

describe('ugs tokens with rate limits', { timeout: 60_000 }, () => {
  let box: Sandbox;
  const create = async (...flags: string[]) =>
    jsonOutput<{ id: number }>(
      await box.ugs('tokens', 'create', '--environment', 'Customer', '--scope', 'write', '--json', ...flags),
    ).id;
  const listed = async () => jsonOutput<ListedToken[]>(await box.ugs('tokens', 'list', '--json'));
  const rateLimitOf = async (id: number) => (await listed()).find((token) => token.id === id)?.rate_limit;

  beforeAll(() => {
    box = sandbox();
  });
  afterAll(cleanUp);

  it('tokens create takes --rate-limit <n>/s or <n>/min and --rate-limit-burst; list shows the limit, null for the default', async () => {
    const perSecond = await create('--rate-limit', '50/s', '--rate-limit-burst', '100');
    const perMinute = await create('--rate-limit', '30/min');
    const plain = await create();
    const tokens = await listed();
    expect(tokens.map((token) => [token.id, token.rate_limit])).toEqual([
      [perSecond, { per_second: 50, burst: 100 }],
      [perMinute, { per_second: 0.5, burst: 30 }],
      [plain, null],
    ]);
    // The table words them for people.
    const table = (await box.ugs('tokens', 'list')).stdout.split('\n');
    expect(table.find((line) => line.startsWith(`${perSecond} `))).toContain('50/s, burst 100');
    expect(table.find((line) => line.startsWith(`${perMinute} `))).toContain('30/min, burst 30');
    expect(table.find((line) => line.startsWith(`${plain} `))).toMatch(/ default /);
    expect(table.join('\n')).not.toContain('per_second');
  });

  it('tokens update sets a limit and --rate-limit default clears it, each audited with before and after', async () => {
    const id = await create('--name', 'backend');
    const set = await box.ugs('tokens', 'update', String(id), '--rate-limit', '5/s');
    expect(set).toMatchObject({ code: 0, stderr: '' });
    expect(set.stdout).toBe(`API token ${id} (backend): 5/s, burst 5\n`);
    expect(await rateLimitOf(id)).toEqual({ per_second: 5, burst: 5 });

    const cleared = jsonOutput<ListedToken>(
      await box.ugs('tokens', 'update', String(id), '--rate-limit', 'default', '--json'),
    );
    expect(cleared).toMatchObject({ id, name: 'backend', rate_limit: null });
    expect(await rateLimitOf(id)).toBeNull();

    const events = jsonOutput<AuditEvent[]>(await box.ugs('audit', 'list', '--json', '--action', 'api_token.updated'));
    expect(events.map((event) => [event.actor, event.changes])).toEqual([
      ['cli', { rate_limit: { before: { per_second: 5, burst: 5 }, after: null } }],
      ['cli', { rate_limit: { before: null, after: { per_second: 5, burst: 5 } } }],
    ]);
  });

  it('--rate-limit changes only the rate and --rate-limit-burst only the burst', async () => {
    const id = await create('--rate-limit', '50/s', '--rate-limit-burst', '100');
    const rate = await box.ugs('tokens', 'update', String(id), '--rate-limit', '10/s');
    expect(rate).toMatchObject({ code: 0, stderr: '' });
    expect(await rateLimitOf(id)).toEqual({ per_second: 10, burst: 100 });
    expect((await box.ugs('tokens', 'update', String(id), '--rate-limit-burst', '7')).code).toBe(0);
    expect(await rateLimitOf(id)).toEqual({ per_second: 10, burst: 7 });
    expect((await box.ugs('tokens', 'update', String(id), '--rate-limit', '1/s', '--rate-limit-burst', '3')).code).toBe(
      0,
    );
    expect(await rateLimitOf(id)).toEqual({ per_second: 1, burst: 3 });

    // A token on the server's default has no rate of its own for a burst to go with.
    const plain = await create();
    const before = auditEventCount(box);
    expectCleanFailure(
      await box.ugs('tokens', 'update', String(plain), '--rate-limit-burst', '5'),
      /no rate limit of its own.*give --rate-limit too/,
    );
    expect(await rateLimitOf(plain)).toBeNull();
    expect(auditEventCount(box)).toBe(before);
  });

  it.each<[string, string[], RegExp]>([
    [
      'a rate that is not one',
      ['tokens', 'create', '--environment', 'Customer', '--scope', 'read', '--rate-limit', 'fast'],
      /--rate-limit.*"fast" is not a rate/s,
    ],
    [
      'a rate per hour',
      ['tokens', 'create', '--environment', 'Customer', '--scope', 'read', '--rate-limit', '5/h'],
      /"5\/h" is not a rate: write <n>\/s or <n>\/min/,
    ],
    [
      'a burst of 0',
      [
        'tokens',
        'create',
        '--environment',
        'Customer',
        '--scope',
        'read',
        '--rate-limit',
        '5/s',
        '--rate-limit-burst',
        '0',
      ],
      /--rate-limit-burst.*"0" is not a burst/s,
    ],
    [
      'a burst without a rate',
      ['tokens', 'create', '--environment', 'Customer', '--scope', 'read', '--rate-limit-burst', '5'],
      /--rate-limit-burst needs --rate-limit/,
    ],
    [
      'a rate above a million a second',
      ['tokens', 'create', '--environment', 'Customer', '--scope', 'read', '--rate-limit', '2000000/s'],
      /per_second must be from 0\.001 to 1000000.*invalid_field/,
    ],
    ['an update that names nothing', ['tokens', 'update', '1'], /Give --rate-limit, --rate-limit-burst or both/],
    [
      'an update of a token that does not exist',
      ['tokens', 'update', '424242', '--rate-limit', '5/s'],
      /424242.*api_token_not_found/,
    ],
    [
      'a burst with "default"',
      ['tokens', 'update', '1', '--rate-limit', 'default', '--rate-limit-burst', '5'],
      /--rate-limit-burst goes with a rate/,
    ],
  ])('refuses %s with a message naming it, and changes nothing', async (_label, args, message) => {
    const before = { tokens: await listed(), events: auditEventCount(box) };
    expectCleanFailure(await box.ugs(...args), message);
    expect({ tokens: await listed(), events: auditEventCount(box) }).toEqual(before);
  });
});

describe('ugs serve --rate-limit', { timeout: 60_000 }, () => {
  afterAll(cleanUp);

  it.each<[string, Record<string, string>, string[], RegExp]>([
    ['a rate per hour', {}, ['--rate-limit', '100/h'], /--rate-limit <rate>.*"100\/h" is not a rate/s],
    ['a rate of 0', { UGS_RATE_LIMIT: '0' }, [], /UGS_RATE_LIMIT.*"0" is not a rate/s],
    ['a burst of 0', { UGS_RATE_LIMIT_BURST: '0' }, [], /UGS_RATE_LIMIT_BURST.*"0" is not a burst/s],
    [
      'a fractional burst',
      {},
      ['--rate-limit', '5/s', '--rate-limit-burst', '2.5'],
      /--rate-limit-burst.*"2\.5" is not a burst/s,
    ],
  ])('refuses to start with %s, saying which setting is wrong', async (_label, env, args, message) => {
    const box = sandbox();
    const result = await runUgs(['serve', '--port', '0', '--database', box.databaseUrl, ...args], { env });
    expectCleanFailure(result, message);
  });

  it('sends the RateLimit headers of the configured limit, and applies a CLI change from the next request', async () => {
    const box = sandbox();
    const server = await box.serve({ env: { UGS_RATE_LIMIT: '5/s' } });
    const { id, token: secret } = jsonOutput<{ id: number; token: string }>(
      await box.ugs('tokens', 'create', '--environment', 'Customer', '--scope', 'admin', '--json'),
    );
    const listSchemas = () => server.request({ method: 'GET', path: '/api/admin/schemas', token: secret });

    const first = await listSchemas();
    expect(first.status).toBe(200);
    // Burst defaults to the n of <n>/s.
    expect(first.headers).toMatchObject({ 'ratelimit-limit': '5', 'ratelimit-policy': '5;w=1;burst=5' });

    expect(
      (await box.ugs('tokens', 'update', String(id), '--rate-limit', '100/min', '--rate-limit-burst', '7')).code,
    ).toBe(0);
    const after = await listSchemas();
    expect(after.status).toBe(200);
    expect(after.headers).toMatchObject({ 'ratelimit-limit': '7', 'ratelimit-policy': '100;w=60;burst=7' });
  });

  it('with UGS_RATE_LIMIT=off sends no RateLimit header', async () => {
    const box = sandbox();
    const server = await box.serve({ env: { UGS_RATE_LIMIT: 'off' } });
    const secret = jsonOutput<{ token: string }>(
      await box.ugs('tokens', 'create', '--environment', 'Customer', '--scope', 'admin', '--json'),
    ).token;
    const res = await server.request({ method: 'GET', path: '/api/admin/schemas', token: secret });
    expect(res.status).toBe(200);
    for (const name of RATE_LIMIT_HEADERS) expect(res.headers[name]).toBeUndefined();
  });
});
