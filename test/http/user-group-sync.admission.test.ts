// Sync (docs/api.md#sync-tenants-as-code) over a real socket: a sync is admitted (scope, bodies in flight) before its body is read,
// and its body is refused at the first group past the bounds, before the rest is sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiToken } from '../support/api-token-issuer.js';
import { pieces, streamedUpload, type StreamedUploadRequest } from '../support/streamed-upload.js';
import { useTestApp } from '../support/test-app.js';
import { uniqueId } from '../support/unique-id.js';
import { SYNC_PATH } from './sync-helpers.js';

const MiB = 1024 * 1024;
const NDJSON = { 'content-type': 'application/x-ndjson' };
/** 64 MiB of `{}` lines, made 256 KiB at a time. */
const emptyObjects = () => pieces(256, () => Buffer.from('{}\n'.repeat((256 * 1024) / 3)));

describe('POST /api/admin/user_groups/sync: admission before the body', () => {
  const fixture = useTestApp();
  let baseUrl: string;
  beforeAll(async () => {
    baseUrl = await fixture.t.listen();
  });

  const upload = (token: string, request: Partial<StreamedUploadRequest> & Pick<StreamedUploadRequest, 'body'>) =>
    streamedUpload(baseUrl, {
      path: `${SYNC_PATH}?dry_run=true`,
      headers: { authorization: `Token ${token}`, ...NDJSON },
      ...request,
    });

  it('answers a read token 403 before reading its 64 MiB body, and closes the connection', async () => {
    const answer = await upload(fixture.t.tokens.default.Customer.read, {
      body: emptyObjects(),
      contentLength: 64 * MiB,
    }).result;
    expect(answer.status).toBe(403);
    expect(answer.body.error).toMatchObject({ code: 'insufficient_scope' });
    expect(answer.headers.connection).toBe('close');
    // Only what the sockets' buffers took before the answer came: a small part of the body.
    expect(answer.sentBeforeAnswer).toBeLessThan(16 * MiB);
    expect(answer.bodyFinishedBeforeAnswer).toBe(false);
    // The server ends the connection after its answer (FIN, then a reset once it stops waiting).
    expect(answer.ended).not.toBe('open');
  });

  it('answers Expect: 100-continue from a read token with the 403 and no 100', async () => {
    const answer = await upload(fixture.t.tokens.default.Customer.read, {
      body: emptyObjects(),
      contentLength: 64 * MiB,
      expectContinue: true,
    }).result;
    expect(answer.status).toBe(403);
    expect(answer.sawContinue).toBe(false);
    expect(answer.sentBeforeAnswer).toBe(0);
    expect(answer.headers.connection).toBe('close');
  });

  it('sends the 100 to an admitted Expect: 100-continue, then reads the body', async () => {
    const body = Buffer.from(`{"user_group_id":"${uniqueId('continue')}"}\n`);
    const answer = await upload(fixture.t.tokens.default.Customer.admin, {
      body: [body],
      contentLength: body.length,
      expectContinue: true,
    }).result;
    expect(answer.sawContinue).toBe(true);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ success: 1, sync: { summary: { create: 1 } } });
  });

  it('refuses a declared length over 64 MiB before reading', async () => {
    const answer = await upload(fixture.t.tokens.default.Customer.admin, {
      body: emptyObjects(),
      contentLength: 64 * MiB + 1,
    }).result;
    expect(answer.status).toBe(413);
    expect(answer.body.error).toMatchObject({ code: 'payload_too_large' });
    expect(answer.bodyFinishedBeforeAnswer).toBe(false);
  });
});

describe('POST /api/admin/user_groups/sync: refused at the first group past the bounds', () => {
  const fixture = useTestApp();
  let baseUrl: string;
  beforeAll(async () => {
    baseUrl = await fixture.t.listen();
  });

  const upload = (body: Iterable<Buffer>, contentType = NDJSON['content-type']) =>
    streamedUpload(baseUrl, {
      path: `${SYNC_PATH}?dry_run=true`,
      headers: { authorization: `Token ${fixture.t.tokens.default.Customer.admin}`, 'content-type': contentType },
      body,
    }).result;
  /** 1 000 small groups a piece. */
  const groups = (count: number, prefix = uniqueId('bound')) =>
    pieces(count, (piece) =>
      Buffer.from(Array.from({ length: 1000 }, (_, i) => `{"user_group_id":"${prefix}-${piece}-${i}"}\n`).join('')),
    );
  // Blank lines: skipped, so only the body's own bound stops them.
  const filler = (count: number) => pieces(count, () => Buffer.from(' '.repeat(MiB - 1) + '\n'));

  it('refuses the 10 001st group of NDJSON before the rest of the body is sent', async () => {
    const answer = await upload(groups(40));
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'invalid_request' });
    expect(answer.body.error?.message).toMatch(/at most 10000 user groups/);
    expect(answer.bodyFinishedBeforeAnswer).toBe(false);
    expect(answer.headers.connection).toBe('close');
  });

  it('refuses an element of a JSON array over 1 MiB at its index, before the element ends', async () => {
    const big = Buffer.from(`[{"user_group_id":"small"},{"user_group_id":"big","properties":{"x":"`);
    const answer = await upload([big, ...pieces(60, () => Buffer.from('y'.repeat(MiB)))], 'application/json');
    expect(answer.status).toBe(413);
    expect(answer.body.error).toMatchObject({ code: 'payload_too_large', index: 1 });
    expect(answer.body.error?.message).toMatch(/^Item 1: /);
    expect(answer.bodyFinishedBeforeAnswer).toBe(false);
    expect(answer.sentBeforeAnswer).toBeLessThan(32 * MiB);
  });

  it('refuses an NDJSON line over 1 MiB at its line number, before the line ends', async () => {
    const start = Buffer.from(`{"user_group_id":"${uniqueId('a')}"}\n\n{"user_group_id":"b","name":"`);
    const answer = await upload([start, ...pieces(60, () => Buffer.from('n'.repeat(MiB)))]);
    expect(answer.status).toBe(413);
    expect(answer.body.error).toMatchObject({ code: 'payload_too_large', line: 3 });
    expect(answer.body.error?.message).toMatch(/^Line 3: /);
    expect(answer.bodyFinishedBeforeAnswer).toBe(false);
  });

  it('refuses 64 MiB and one byte of a body that declares no length', async () => {
    const answer = await upload([Buffer.from(`{"user_group_id":"${uniqueId('a')}"}\n`), ...filler(100)]);
    expect(answer.status).toBe(413);
    expect(answer.body.error).toMatchObject({ code: 'payload_too_large' });
    expect(answer.bodyFinishedBeforeAnswer).toBe(false);
  });
});

describe('POST /api/admin/user_groups/sync: bodies in flight', () => {
  const fixture = useTestApp();
  let baseUrl: string;
  const admins: string[] = [];
  beforeAll(async () => {
    baseUrl = await fixture.t.listen();
    for (let index = 0; index < 4; index += 1) admins.push((await issueApiToken(fixture.t, { scope: 'admin' })).secret);
  });

  /** An upload that is admitted, sends its first group and then waits, holding its place. */
  const holding = (token: string) => {
    const started = streamedUpload(baseUrl, {
      path: `${SYNC_PATH}?dry_run=true`,
      headers: { authorization: `Token ${token}`, ...NDJSON },
      body: pieces(100, (index) => Buffer.from(`{"user_group_id":"${uniqueId(`held-${index}`)}"}\n`)),
      pauseAfterBytes: 1,
      // The 100 comes once the server has admitted it (its place taken): only then does it pause.
      expectContinue: true,
    });
    return started;
  };
  const next = (token: string) =>
    streamedUpload(baseUrl, {
      path: `${SYNC_PATH}?dry_run=true`,
      headers: { authorization: `Token ${token}`, ...NDJSON },
      body: [Buffer.from(`{"user_group_id":"${uniqueId('next')}"}\n`)],
    }).result;
  const held: Array<ReturnType<typeof holding>> = [];
  afterAll(() => held.forEach((upload) => upload.abort()));

  it('answers the third body of one token, and the fifth of the server, 429 with Retry-After', async () => {
    const [first, second, third, fourth] = admins as [string, string, string, string];
    held.push(holding(first), holding(first));
    await Promise.all(held.map((upload) => upload.paused));

    const perToken = await next(first);
    expect(perToken.status).toBe(429);
    expect(perToken.body.error).toMatchObject({ code: 'in_flight_limit' });
    expect(perToken.body.error?.message).toMatch(/API token/);
    expect(Number(perToken.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Another token still gets through, up to the server's bound.
    held.push(holding(second), holding(third));
    await Promise.all(held.map((upload) => upload.paused));
    const perServer = await next(fourth);
    expect(perServer.status).toBe(429);
    expect(perServer.body.error).toMatchObject({ code: 'in_flight_limit' });
    expect(perServer.body.error?.message).toMatch(/server/);
    expect(Number(perServer.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    // A client that goes gives its place back.
    held.splice(0).forEach((upload) => upload.abort());
    const after = await waitForAdmission(() => next(first));
    expect(after.status).toBe(200);
  });
});

/** Retries while the places of closed uploads are still being given back (the server sees the close a moment later). */
async function waitForAdmission<T extends { status: number }>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 0; ; tries += 1) {
    const answer = await attempt();
    if (answer.status !== 429 || tries >= 50) return answer;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
