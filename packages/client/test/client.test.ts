// The client library against a real server over a socket (packages/client/README.md): every method, the one error
// class, safe retries with one Idempotency-Key, and the offline embed-token verifier.
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/test-app.js';
import {
  createClient,
  createEmbedTokenVerifier,
  EmbedOriginError,
  EmbedSingleUseError,
  keepEmbedTokenFresh,
  refreshEmbedToken,
  UgsError,
  verifyWebhook,
  WebhookVerificationError,
  type UgsClient,
} from '../src/index.js';
import { startWebhookReceiver } from '../../../test/support/webhook-receiver.js';

let t: TestApp;
let baseUrl = '';
let admin: UgsClient;

beforeAll(async () => {
  t = await createTestApp({ publicUrl: () => baseUrl });
  baseUrl = await t.listen();
  admin = createClient({ baseUrl, apiToken: t.tokens.default.Customer.admin });
});

afterAll(async () => {
  await t?.close();
});

/** A front for the server that answers some requests itself or loses their answers, as networks do. */
async function startFront(
  decide: (
    request: IncomingMessage,
    count: number,
  ) => 'forward' | 'lose-answer' | { status: number; retryAfter: string } | { delayMs: number },
) {
  const counts = new Map<string, number>();
  const server: Server = createServer((incoming, outgoing) => {
    const key = `${incoming.method} ${incoming.url}`;
    const count = (counts.get(key) ?? 0) + 1;
    counts.set(key, count);
    const decision = decide(incoming, count);
    if (typeof decision === 'object' && 'delayMs' in decision) {
      incoming.pause();
      setTimeout(() => forward(incoming, outgoing, 'forward'), decision.delayMs);
      return;
    }
    if (typeof decision === 'object') {
      incoming.resume();
      outgoing.writeHead(decision.status, { 'content-type': 'application/json', 'retry-after': decision.retryAfter });
      outgoing.end(
        JSON.stringify({
          success: 0,
          error: {
            code: decision.status === 429 ? 'rate_limited' : 'unavailable',
            message: 'Try again.',
            request_id: 'front',
          },
        }),
      );
      return;
    }
    forward(incoming, outgoing, decision);
  });
  function forward(incoming: IncomingMessage, outgoing: ServerResponse, decision: 'forward' | 'lose-answer') {
    const upstream = httpRequest(
      `${baseUrl}${incoming.url}`,
      { method: incoming.method, headers: incoming.headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          // The server did the work and answered; the answer never reaches the client.
          if (decision === 'lose-answer') return outgoing.socket?.destroy();
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          outgoing.end(Buffer.concat(chunks));
        });
      },
    );
    // A client that gave up (a time limit) closes its socket under the front: not a failure here.
    incoming.on('error', () => upstream.destroy());
    upstream.on('error', () => outgoing.destroy());
    incoming.pipe(upstream);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('every operation', () => {
  it("the user group operations, with the server's types", async () => {
    const write = createClient({ baseUrl, apiToken: t.tokens.default.Customer.write });
    const schema = await admin.createSchema({ name: 'client-sales' });
    const dataSource = await admin.createDataSource({ provided_id: 'client-ds', name: 'DS', schema_id: schema.id });
    const created = await write.getOrCreateUserGroup({
      user_group_id: 'client-1',
      name: 'Client One',
      mapping: { [schema.id]: 'client-ds' },
      properties: { a: 1 },
    });
    expect(created.newUserGroup).toBe(true);
    expect(created.userGroup).toMatchObject({
      provided_id: 'client-1',
      name: 'Client One',
      mapping: { [schema.id]: String(dataSource.id) },
      properties: { a: 1 },
    });
    expect((await write.getOrCreateUserGroup({ user_group_id: 'client-1' })).newUserGroup).toBe(false);

    const updated = await write.updateUserGroup({ user_group_id: 'client-1', properties: { a: 2 } });
    expect(updated.properties).toEqual({ a: 2 });
    const rotated = await write.rotateUserGroupToken(created.userGroup.token);
    expect(rotated.token).not.toBe(created.userGroup.token);
    expect((await write.verifyToken(rotated.token)).user_group.team_id).toBe(created.userGroup.team_id);

    const minted = await write.mintEmbedToken({ user_group_id: 'client-1', embed_id: 'board' });
    const verified = await write.verifyToken(minted.embed_token);
    expect(verified.embed).toMatchObject({ embed_id: 'board', properties: { a: 2 } });
    await write.deleteUserGroup({ user_group_id: 'client-1' });
    await expect(write.verifyToken(rotated.token)).rejects.toMatchObject({ status: 404, code: 'user_group_not_found' });
  });

  it("the tree fields and the list filters, typed from the server's schemas", async () => {
    await admin.getOrCreateUserGroup({
      user_group_id: 'client-parent',
      properties: { plan: 'pro', region: 'none' },
      tags: ['eu'],
    });
    const child = await admin.getOrCreateUserGroup({
      user_group_id: 'client-child',
      parent_user_group_id: 'client-parent',
      is_demo_group: true,
      properties: { region: 'emea' },
    });
    expect(child.userGroup).toMatchObject({
      parent_user_group_id: 'client-parent',
      is_demo_group: true,
      tags: [],
      computed_properties: { plan: 'pro', region: 'emea' },
    });
    const moved = await admin.updateUserGroup({
      user_group_id: 'client-child',
      parent_user_group_id: null,
      tags: ['b', 'a'],
    });
    expect(moved).toMatchObject({
      parent_user_group_id: null,
      tags: ['a', 'b'],
      computed_properties: { region: 'emea' },
    });
    expect((await admin.listUserGroups({ tag: 'eu' })).items.map((group) => group.provided_id)).toEqual([
      'client-parent',
    ]);
    expect(
      (await admin.listUserGroups({ is_demo_group: 'true', q: 'client-' })).items.map((group) => group.provided_id),
    ).toEqual(['client-child']);
    await admin.updateUserGroup({ user_group_id: 'client-child', parent_user_group_id: 'client-parent' });
    expect((await admin.listUserGroups({ parent: 'client-parent' })).items.map((group) => group.provided_id)).toEqual([
      'client-child',
    ]);
    await expect(admin.deleteUserGroup({ user_group_id: 'client-parent' })).rejects.toMatchObject({
      status: 409,
      code: 'user_group_has_children',
    });
  });

  it('the admin operations', async () => {
    const schemas = await admin.listSchemas();
    expect(schemas.items.map((schema) => schema.name)).toContain('client-sales');
    expect(schemas.next_cursor).toBeNull();
    const [schema] = schemas.items;
    const dataSource = await admin.createDataSource({
      provided_id: 'client-ds-2',
      name: 'Two',
      schema_id: schema!.id,
      environment: 'Testing',
    });
    const testing = { environment: 'Testing' as const };
    expect(await admin.getDataSource(dataSource.id, testing)).toEqual(dataSource);
    expect((await admin.listDataSources(testing)).items.map((source) => source.id)).toContain(dataSource.id);
    expect(await admin.updateDataSource(dataSource.id, { name: 'Renamed' }, testing)).toMatchObject({
      name: 'Renamed',
    });
    expect(await admin.deleteDataSource(dataSource.id, testing)).toMatchObject({ id: dataSource.id });

    await admin.getOrCreateUserGroup({ user_group_id: 'client-admin' });
    const page = await admin.listUserGroups({ q: 'client-admin' });
    expect(page.items.map((group) => group.provided_id)).toEqual(['client-admin']);
    expect(page.next_cursor).toBeNull();
    expect((await admin.getUserGroup(page.items[0]!.team_id)).provided_id).toBe('client-admin');

    const issued = await admin.createApiToken({ name: 'client-made', scope: 'read' });
    expect(issued.token).toMatch(/^ugs_live_/);
    expect((await admin.listApiTokens()).items.map((token) => token.name)).toContain('client-made');
    expect((await admin.listApiTokens({ environment: 'Testing' })).items.map((token) => token.name)).not.toContain(
      'client-made',
    );
    expect(await admin.updateApiToken(issued.id, { rate_limit: { per_second: 5, burst: 10 } })).toMatchObject({
      rate_limit: { per_second: 5, burst: 10 },
    });
    expect(await admin.revokeApiToken(issued.id)).toMatchObject({ id: issued.id });

    const audit = await admin.listAuditEvents({ action: 'api_token.revoked', limit: '10' });
    expect(audit.items[0]).toMatchObject({ action: 'api_token.revoked' });
    const rotation = await admin.rotateSigningKey();
    expect((await admin.listSigningKeys()).items[0]!.kid).toBe(rotation.current.kid);

    // People's console sessions (none here: no identity provider), and their ending, as the server answers.
    expect(await admin.listPersonSessions({ person_issuer: 'https://idp.example.com', person_sub: 'ada' })).toEqual([]);
    expect(await admin.endPersonSessions({ issuer: 'https://idp.example.com', sub: 'ada' })).toBe(0);
    await expect(admin.endPersonSession(999_999)).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('syncs groups: a dry run plans and writes nothing, an apply writes, a refusal names the line or index', async () => {
    await admin.getOrCreateUserGroup({ user_group_id: 'client-sync-root', name: 'Before', tags: ['client-sync'] });
    const file = [
      JSON.stringify({ user_group_id: 'client-sync-root', name: 'After' }),
      JSON.stringify({
        user_group_id: 'client-sync-child',
        parent_user_group_id: 'client-sync-root',
        tags: ['client-sync'],
      }),
      '',
    ].join('\n');
    const dry = await admin.syncUserGroups(file, { dryRun: true, prune: 'client-sync' });
    expect(dry).toMatchObject({
      dry_run: true,
      applied: false,
      summary: { create: 1, update: 1, unchanged: 0, delete: 0 },
    });
    expect(dry.plan[0]).toEqual({
      action: 'update',
      user_group_id: 'client-sync-root',
      team_id: expect.any(Number),
      line: 1,
      changes: { name: { before: 'Before', after: 'After' } },
    });
    expect(dry.plan[1]).toMatchObject({ action: 'create', team_id: null, line: 2 });
    expect((await admin.listUserGroups({ q: 'client-sync-child' })).items).toEqual([]);

    const applied = await admin.syncUserGroups(file, { prune: 'client-sync' });
    expect(applied).toMatchObject({ dry_run: false, applied: true, id: expect.stringMatching(/^sync_/) });
    expect(
      (await admin.listUserGroups({ parent: 'client-sync-root' })).items.map((group) => group.provided_id),
    ).toEqual(['client-sync-child']);
    // The same state as an array of groups: nothing left to do.
    const again = await admin.syncUserGroups([
      { user_group_id: 'client-sync-root', name: 'After' },
      { user_group_id: 'client-sync-child', parent_user_group_id: 'client-sync-root' },
    ]);
    expect([again.applied, again.summary]).toEqual([false, { create: 0, update: 0, unchanged: 2, delete: 0 }]);
    expect(again.plan.map((item) => item.index)).toEqual([0, 1]);

    const byLine = await admin
      .syncUserGroups(
        `${JSON.stringify({ user_group_id: 'client-sync-root' })}\n{"user_group_id":"client-sync-x","name":""}\n`,
      )
      .catch((caught: unknown) => caught);
    expect(byLine).toBeInstanceOf(UgsError);
    expect(byLine).toMatchObject({ status: 400, code: 'invalid_field', field: 'name', line: 2, index: undefined });
    const byIndex = await admin
      .syncUserGroups(' [{"user_group_id":"client-sync-x","tags":"x"}]', { dryRun: true })
      .catch((caught: unknown) => caught);
    expect(byIndex).toMatchObject({ status: 400, code: 'invalid_field', field: 'tags', index: 0, line: undefined });
  });

  it('imports the lines of an export: a dry run writes nothing, the import gives the summary, a bad line is named', async () => {
    const lines = [
      { provided_id: 'client-import-root', name: 'Imported' },
      { provided_id: 'client-import-child', parent_user_group_id: 'client-import-root' },
    ];
    const dry = await admin.importUserGroups(lines, { dryRun: true });
    // What each line lacked of the fields the service keeps (neither carries a mapping, for one).
    const lacking = {
      lacking: [
        {
          index: 0,
          provided_id: 'client-import-root',
          fields: ['properties', 'mapping', 'parent_user_group_id', 'is_demo_group'],
        },
        { index: 1, provided_id: 'client-import-child', fields: ['name', 'properties', 'mapping', 'is_demo_group'] },
      ],
      lacking_lines: 2,
      lacking_fields: {
        name: { lacked: 1 },
        properties: { lacked: 2 },
        mapping: { lacked: 2 },
        parent_user_group_id: { lacked: 1 },
        is_demo_group: { lacked: 2 },
      },
    };
    expect(dry).toEqual({ dry_run: true, created: 2, updated: 0, unchanged: 0, rejected: [], ...lacking });
    expect((await admin.listUserGroups({ q: 'client-import' })).items).toEqual([]);
    expect(await admin.importUserGroups(lines)).toMatchObject({ dry_run: false, created: 2 });
    const file = `${JSON.stringify(lines[0])}\n{"provided_id":"client-import-bad","colour":"red"}\n`;
    expect(await admin.importUserGroups(file)).toEqual({
      dry_run: false,
      created: 0,
      updated: 0,
      unchanged: 1,
      rejected: [{ line: 2, reason: expect.stringMatching(/colour/) }],
      lacking: [
        {
          line: 1,
          provided_id: 'client-import-root',
          fields: ['properties', 'mapping', 'parent_user_group_id', 'is_demo_group'],
        },
      ],
      lacking_lines: 1,
      lacking_fields: {
        properties: { lacked: 1 },
        mapping: { lacked: 1 },
        parent_user_group_id: { lacked: 1 },
        is_demo_group: { lacked: 1 },
      },
    });
  });

  it('throws one error class carrying status, code, field and request id', async () => {
    const error = await admin
      .updateUserGroup({ user_group_id: 'client-nope', name: '' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UgsError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_field', field: 'name', requestId: expect.any(String) });
    const unauthenticated = createClient({ baseUrl, apiToken: 'ugs_live_nope' });
    await expect(unauthenticated.listSchemas()).rejects.toMatchObject({ status: 401, code: 'invalid_api_token' });
  });
});

describe('embed-token lifecycle: introspection, single use, refresh', () => {
  const read = () => createClient({ baseUrl, apiToken: t.tokens.default.Customer.read });
  const singleUse = async (id: string) => {
    await admin.getOrCreateUserGroup({ user_group_id: id });
    return (await read().mintEmbedToken({ user_group_id: id, single_use: true })).embed_token;
  };
  const loseFirstAnswer = () =>
    startFront((request, count) => (request.method === 'POST' && count === 1 ? 'lose-answer' : 'forward'));

  it('a single-use token whose first verify answer is lost still verifies on the retry (same Idempotency-Key), and once only', async () => {
    const token = await singleUse('client-single-verify');
    const front = await loseFirstAnswer();
    try {
      const viaFront = createClient({ baseUrl: front.url, apiToken: t.tokens.default.Customer.read });
      expect((await viaFront.verifyToken(token)).embed).toBeDefined();
      expect(front.counts.get('POST /api/user/verify')).toBe(2);
      await expect(read().verifyToken(token)).rejects.toMatchObject({ status: 404, code: 'user_group_not_found' });
    } finally {
      await front.close();
    }
  });

  it('introspects (RFC 7662): a lost answer of a single-use token is active again on the retry, inactive for anyone else', async () => {
    const token = await singleUse('client-single-introspect');
    const front = await loseFirstAnswer();
    try {
      const viaFront = createClient({ baseUrl: front.url, apiToken: t.tokens.default.Customer.read });
      const answer = await viaFront.introspectEmbedToken(token);
      expect(answer).toMatchObject({ active: true, sub: 'client-single-introspect', ugs: { single_use: true } });
      expect(front.counts.get('POST /w/default/introspect')).toBe(2);
      expect(await read().introspectEmbedToken(token)).toEqual({ active: false });
    } finally {
      await front.close();
    }
    await expect(
      createClient({ baseUrl, apiToken: t.tokens.default.Testing.read }).introspectEmbedToken(token),
    ).rejects.toMatchObject({ status: 401, code: 'unauthenticated' });
  });

  it('the offline verifier refuses a single-use token unless its caller introspects', async () => {
    const token = await singleUse('client-single-offline');
    const issuer = `${baseUrl}/w/default`;
    await expect(createEmbedTokenVerifier({ issuer, audience: 'ugs-embed' })(token)).rejects.toBeInstanceOf(
      EmbedSingleUseError,
    );
    const claims = await createEmbedTokenVerifier({ issuer, audience: 'ugs-embed', introspectsSingleUse: true })(token);
    expect(claims.ugs.single_use).toBe(true);
  });

  it('keeps a session token fresh before it expires, and says when a token cannot refresh', async () => {
    await admin.getOrCreateUserGroup({ user_group_id: 'client-session', properties: { plan: 'pro' } });
    const minted = await read().mintEmbedToken({
      user_group_id: 'client-session',
      expires_in: 60,
      session_seconds: 600,
    });
    expect(minted.session_ends_at).toBeDefined();
    const fresh = await new Promise<string>((resolve, reject) => {
      // A margin of 59 s on a 60 s token: the first refresh is due at once.
      const keeper = keepEmbedTokenFresh({
        baseUrl,
        token: minted.embed_token,
        marginSeconds: 59,
        onToken: (token) => {
          keeper.stop();
          resolve(token);
        },
        onEnd: reject,
      });
    });
    expect(fresh).not.toBe(minted.embed_token);
    expect((await read().verifyToken(fresh)).user_group.provided_id).toBe('client-session');

    const plain = (await read().mintEmbedToken({ user_group_id: 'client-session' })).embed_token;
    await expect(refreshEmbedToken(plain, { baseUrl })).rejects.toMatchObject({
      status: 401,
      code: 'embed_session_ended',
    });
    const ended = await new Promise<unknown>((resolve) =>
      keepEmbedTokenFresh({ baseUrl, token: plain, onToken: () => undefined, onEnd: resolve }),
    );
    expect(ended).toBeInstanceOf(Error);
  });
});

describe('safe retries', () => {
  it('a rotation whose first answer is lost is retried with the same Idempotency-Key and rotates once', async () => {
    const write = createClient({ baseUrl, apiToken: t.tokens.default.Customer.write });
    const group = (await write.getOrCreateUserGroup({ user_group_id: 'client-lost' })).userGroup;
    const front = await startFront((request, count) =>
      request.method === 'POST' && count === 1 ? 'lose-answer' : 'forward',
    );
    try {
      const viaFront = createClient({ baseUrl: front.url, apiToken: t.tokens.default.Customer.write });
      const rotated = await viaFront.rotateUserGroupToken(group.token);
      expect(front.counts.get('POST /api/user')).toBe(2);
      expect((await write.verifyToken(rotated.token)).user_group.team_id).toBe(group.team_id);
      const events = await admin.listAuditEvents({
        action: 'user_group.token_rotated',
        team_id: String(group.team_id),
      });
      expect(events.items).toHaveLength(1);
    } finally {
      await front.close();
    }
  });

  it('waits as Retry-After says after a 429 or a 503, then succeeds; gives up after maxRetries', async () => {
    const front = await startFront((_request, count) =>
      count === 1 ? { status: 429, retryAfter: '1' } : count === 2 ? { status: 503, retryAfter: '0' } : 'forward',
    );
    try {
      const started = Date.now();
      expect(
        await createClient({ baseUrl: front.url, apiToken: t.tokens.default.Customer.admin }).listSchemas(),
      ).toEqual({ items: expect.any(Array), next_cursor: null });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      const refusing = await startFront(() => ({ status: 503, retryAfter: '1' }));
      try {
        await expect(
          createClient({ baseUrl: refusing.url, apiToken: 'x', maxRetries: 0 }).listSchemas(),
        ).rejects.toMatchObject({ status: 503, code: 'unavailable' });
      } finally {
        await refusing.close();
      }
    } finally {
      await front.close();
    }
  });
});

describe('time limits', () => {
  it("a sync outlasts the transport's time limit (an apply is one long transaction); other calls do not", async () => {
    const front = await startFront(() => ({ delayMs: 600 }));
    try {
      const slow = createClient({
        baseUrl: front.url,
        apiToken: t.tokens.default.Customer.admin,
        timeoutMs: 200,
        maxRetries: 0,
      });
      await expect(slow.listSchemas()).rejects.toMatchObject({ status: 0, code: 'network_error' });
      const plan = await slow.syncUserGroups([{ user_group_id: 'client-slow-sync', name: 'Slow' }], { dryRun: true });
      expect(plan.summary).toMatchObject({ create: 1 });
      expect(front.counts.get('POST /api/admin/user_groups/sync?dry_run=true')).toBe(1);
    } finally {
      await front.close();
    }
  });
});

describe('createEmbedTokenVerifier', () => {
  const read = () => createClient({ baseUrl, apiToken: t.tokens.default.Customer.read });
  const issuer = () => `${baseUrl}/w/default`;

  async function jwksFetches(): Promise<number> {
    const metrics = await (await fetch(`${baseUrl}/metrics`)).text();
    const line = metrics
      .split('\n')
      .find(
        (entry) =>
          entry.startsWith('ugs_http_requests_total') && entry.includes('jwks.json') && entry.includes('status="200"'),
      );
    return line ? Number(line.split(' ').at(-1)) : 0;
  }

  it('accepts a valid token offline, and refuses an expired, foreign-audience, foreign-issuer, tampered or wrong-origin one', async () => {
    await admin.getOrCreateUserGroup({ user_group_id: 'client-embed' });
    const { embed_token: token } = await read().mintEmbedToken({
      user_group_id: 'client-embed',
      embed_id: 'board',
      origin: 'https://app.example.com',
      expires_in: 60,
    });
    const verify = createEmbedTokenVerifier({ issuer: issuer(), audience: 'board' });
    const claims = await verify(token, { origin: 'https://app.example.com' });
    expect(claims).toMatchObject({
      sub: 'client-embed',
      aud: 'board',
      ugs: { workspace: 'default', environment: 'Customer', origin: 'https://app.example.com' },
    });

    await expect(verify(token, { currentDate: new Date(Date.now() + 120_000) })).rejects.toMatchObject({
      code: 'ERR_JWT_EXPIRED',
    });
    await expect(createEmbedTokenVerifier({ issuer: issuer(), audience: 'other-board' })(token)).rejects.toMatchObject({
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
      claim: 'aud',
    });
    await expect(
      createEmbedTokenVerifier({ issuer: `${baseUrl}/w/other`, audience: 'board' })(token),
    ).rejects.toThrow();
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'someone-else' }),
    ).toString('base64url');
    await expect(verify(`${header}.${forged}.${signature}`)).rejects.toMatchObject({
      code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
    });
    await expect(verify(token, { origin: 'https://evil.example.com' })).rejects.toBeInstanceOf(EmbedOriginError);
  });

  it('fetches the JWKS once, and once more for a token of a key it has not seen (a rotation)', async () => {
    await admin.getOrCreateUserGroup({ user_group_id: 'client-refetch' });
    const verify = createEmbedTokenVerifier({ issuer: issuer(), audience: 'ugs-embed', cooldownMs: 0 });
    const before = await jwksFetches();
    for (let i = 0; i < 3; i += 1)
      await verify((await read().mintEmbedToken({ user_group_id: 'client-refetch' })).embed_token);
    expect(await jwksFetches()).toBe(before + 1);
    await admin.rotateSigningKey();
    const afterRotation = (await read().mintEmbedToken({ user_group_id: 'client-refetch' })).embed_token;
    await verify(afterRotation);
    await verify(afterRotation);
    expect(await jwksFetches()).toBe(before + 2);
  });
});

describe('webhooks', () => {
  it('manages endpoints and deliveries, and verifyWebhook checks what the service sends', async () => {
    const hooked = await createTestApp({ webhooks: { allowPrivate: true, worker: { pollIntervalMs: 20 } } });
    const receiver = await startWebhookReceiver();
    try {
      const client = createClient({ baseUrl: await hooked.listen(), apiToken: hooked.tokens.default.Customer.admin });
      const endpoint = await client.createWebhookEndpoint({
        url: receiver.url,
        events: ['user_group.created'],
        description: 'client',
      });
      expect(endpoint).toMatchObject({
        url: receiver.url,
        events: ['user_group.created'],
        enabled: true,
        secret: expect.stringMatching(/^whsec_/),
      });
      const { secret: _secret, ...listed } = endpoint;
      expect(await client.listWebhookEndpoints()).toEqual({ items: [listed], next_cursor: null });
      await client.getOrCreateUserGroup({ user_group_id: 'client-hooked' });
      await receiver.waitFor((received) => received.length === 1);
      const [received] = receiver.received;
      const event = await verifyWebhook(received!.headers, received!.body, endpoint.secret);
      expect(event).toMatchObject({
        type: 'user_group.created',
        workspace: 'default',
        data: { user_group: { provided_id: 'client-hooked' } },
      });

      // A changed body, another secret, or an old timestamp are refused.
      await expect(
        verifyWebhook(received!.headers, received!.body.replace('client-hooked', 'client-hacked'), endpoint.secret),
      ).rejects.toThrow(WebhookVerificationError);
      await expect(
        verifyWebhook(received!.headers, received!.body, `whsec_${Buffer.alloc(32).toString('base64')}`),
      ).rejects.toThrow(WebhookVerificationError);
      await expect(
        verifyWebhook(received!.headers, received!.body, endpoint.secret, { now: new Date(Date.now() + 10 * 60_000) }),
      ).rejects.toThrow(WebhookVerificationError);
      // A fetch Headers object works as well as node's header record.
      expect(
        await verifyWebhook(new Headers(received!.headers as Record<string, string>), received!.body, endpoint.secret),
      ).toEqual(event);

      const rotated = await client.rotateWebhookSecret(endpoint.id);
      await client.getOrCreateUserGroup({ user_group_id: 'client-hooked-2' });
      await receiver.waitFor((all) => all.length === 2);
      const second = receiver.received[1]!;
      expect(await verifyWebhook(second.headers, second.body, rotated.secret)).toMatchObject({
        data: { user_group: { provided_id: 'client-hooked-2' } },
      });
      expect(await verifyWebhook(second.headers, second.body, endpoint.secret)).toMatchObject({
        data: { user_group: { provided_id: 'client-hooked-2' } },
      });

      // The receiver has both; the worker records the second outcome right after its answer.
      await expect
        .poll(async () =>
          (await client.listWebhookDeliveries({ endpoint_id: String(endpoint.id) })).items.map(
            (delivery) => delivery.status,
          ),
        )
        .toEqual(['delivered', 'delivered']);
      const deliveries = await client.listWebhookDeliveries({ endpoint_id: String(endpoint.id) });
      // A delivered delivery is not sent again: it would carry an older state than later events.
      await expect(client.retryWebhookDelivery(deliveries.items[1]!.id)).rejects.toMatchObject({
        status: 409,
        code: 'webhook_delivery_delivered',
      });
      expect(await client.updateWebhookEndpoint(endpoint.id, { enabled: false })).toMatchObject({ enabled: false });
      expect(await client.deleteWebhookEndpoint(endpoint.id)).toMatchObject({ id: endpoint.id });
      await expect(client.getWebhookEndpoint(endpoint.id)).rejects.toMatchObject({
        status: 404,
        code: 'webhook_endpoint_not_found',
      });
    } finally {
      await hooked.close();
      await receiver.close();
    }
  });
});
