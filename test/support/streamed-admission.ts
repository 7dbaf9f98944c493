// The admission and bounds of a route that takes a streamed body of many groups (src/http/streamed-body.ts),
// over a real socket: admitted (scope, bodies in flight) before its body is read, and its body refused
// at the first group past the bounds, before the rest is sent. The sync and the import run these cases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiToken } from './api-token-issuer.js';
import { pieces, streamedUpload, type StreamedUploadRequest } from './streamed-upload.js';
import { useTestApp } from './test-app.js';
import { uniqueId } from './unique-id.js';

/** A streamed-body route, as its admission cases need it. */
export interface StreamedRoute {
  /** The describe blocks' name, e.g. `POST /api/admin/user_groups/sync`. */
  name: string;
  /** Its path; the cases send `?dry_run=true`, so that what is admitted writes nothing. */
  path: string;
  /** The key a group's id goes under (`user_group_id` in a sync, `provided_id` in an import). */
  idKey: string;
  /** What its answer to one new group matches. */
  oneCreated: Record<string, unknown>;
}

const MiB = 1024 * 1024;
const NDJSON = { 'content-type': 'application/x-ndjson' };
/** 64 MiB of `{}` lines, made 256 KiB at a time. */
const emptyObjects = () => pieces(256, () => Buffer.from('{}\n'.repeat((256 * 1024) / 3)));

/** The admission, bounds and bodies-in-flight cases, each describe block on a test app of its own. */
export function describeStreamedAdmission(route: StreamedRoute): void {
  describe(`${route.name}: admission before the body`, () => {
    const fixture = useTestApp();
    let baseUrl: string;
    beforeAll(async () => {
      baseUrl = await fixture.t.listen();
    });

    const upload = (token: string, request: Partial<StreamedUploadRequest> & Pick<StreamedUploadRequest, 'body'>) =>
      streamedUpload(baseUrl, {
        path: `${route.path}?dry_run=true`,
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
      const body = Buffer.from(`{"${route.idKey}":"${uniqueId('continue')}"}\n`);
      const answer = await upload(fixture.t.tokens.default.Customer.admin, {
        body: [body],
        contentLength: body.length,
        expectContinue: true,
      }).result;
      expect(answer.sawContinue).toBe(true);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject(route.oneCreated);
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

  describe(`${route.name}: refused at the first group past the bounds`, () => {
    const fixture = useTestApp();
    let baseUrl: string;
    beforeAll(async () => {
      baseUrl = await fixture.t.listen();
    });

    const upload = (body: Iterable<Buffer>, contentType = NDJSON['content-type']) =>
      streamedUpload(baseUrl, {
        path: `${route.path}?dry_run=true`,
        headers: { authorization: `Token ${fixture.t.tokens.default.Customer.admin}`, 'content-type': contentType },
        body,
      }).result;
    /** 1 000 small groups a piece. */
    const groups = (count: number, prefix = uniqueId('bound')) =>
      pieces(count, (piece) =>
        Buffer.from(Array.from({ length: 1000 }, (_, i) => `{"${route.idKey}":"${prefix}-${piece}-${i}"}\n`).join('')),
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
      const big = Buffer.from(`[{"${route.idKey}":"small"},{"${route.idKey}":"big","properties":{"x":"`);
      const answer = await upload([big, ...pieces(60, () => Buffer.from('y'.repeat(MiB)))], 'application/json');
      expect(answer.status).toBe(413);
      expect(answer.body.error).toMatchObject({ code: 'payload_too_large', index: 1 });
      expect(answer.body.error?.message).toMatch(/^Item 1: /);
      expect(answer.bodyFinishedBeforeAnswer).toBe(false);
      expect(answer.sentBeforeAnswer).toBeLessThan(32 * MiB);
    });

    it('refuses an NDJSON line over 1 MiB at its line number, before the line ends', async () => {
      const start = Buffer.from(`{"${route.idKey}":"${uniqueId('a')}"}\n\n{"${route.idKey}":"b","name":"`);
      const answer = await upload([start, ...pieces(60, () => Buffer.from('n'.repeat(MiB)))]);
      expect(answer.status).toBe(413);
      expect(answer.body.error).toMatchObject({ code: 'payload_too_large', line: 3 });
      expect(answer.body.error?.message).toMatch(/^Line 3: /);
      expect(answer.bodyFinishedBeforeAnswer).toBe(false);
    });

    it('refuses 64 MiB and one byte of a body that declares no length', async () => {
      const answer = await upload([Buffer.from(`{"${route.idKey}":"${uniqueId('a')}"}\n`), ...filler(100)]);
      expect(answer.status).toBe(413);
      expect(answer.body.error).toMatchObject({ code: 'payload_too_large' });
      expect(answer.bodyFinishedBeforeAnswer).toBe(false);
    });
  });

  describe(`${route.name}: bodies in flight`, () => {
    const fixture = useTestApp();
    let baseUrl: string;
    const admins: string[] = [];
    beforeAll(async () => {
      baseUrl = await fixture.t.listen();
      for (let index = 0; index < 4; index += 1)
        admins.push((await issueApiToken(fixture.t, { scope: 'admin' })).secret);
    });

    /** An upload that is admitted, sends its first group and then waits, holding its place. */
    const holding = (token: string) => {
      const started = streamedUpload(baseUrl, {
        path: `${route.path}?dry_run=true`,
        headers: { authorization: `Token ${token}`, ...NDJSON },
        body: pieces(100, (index) => Buffer.from(`{"${route.idKey}":"${uniqueId(`held-${index}`)}"}\n`)),
        pauseAfterBytes: 1,
        // The 100 comes once the server has admitted it (its place taken): only then does it pause.
        expectContinue: true,
      });
      return started;
    };
    const next = (token: string) =>
      streamedUpload(baseUrl, {
        path: `${route.path}?dry_run=true`,
        headers: { authorization: `Token ${token}`, ...NDJSON },
        body: [Buffer.from(`{"${route.idKey}":"${uniqueId('next')}"}\n`)],
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
}

/** Retries while the places of closed uploads are still being given back (the server sees the close a moment later). */
async function waitForAdmission<T extends { status: number }>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 0; ; tries += 1) {
    const answer = await attempt();
    if (answer.status !== 429 || tries >= 50) return answer;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
