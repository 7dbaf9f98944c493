// POST /api/admin/user_groups/import refusals: a body refused whole changes nothing and says why; a
// bad line is refused in the summary, as `ugs groups import` refuses it, and the others go on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from '../support/http-client.js';
import { pieces, streamedUpload } from '../support/streamed-upload.js';
import { useTestApp } from '../support/test-app.js';
import { uniqueId } from '../support/unique-id.js';
import { expectError, expectUnchanged, snapshotDatabase } from './helpers.js';
import { IMPORT_PATH, importCall, importOk, type ImportRequest } from './import-helpers.js';

describe('POST /api/admin/user_groups/import: bodies refused whole', () => {
  const fixture = useTestApp();

  const refused = async (status: number, code: string, request: ImportRequest, lines: unknown[] = []) => {
    const response = await expectUnchanged(fixture.t, () => importCall(fixture.t, lines, request));
    expectError(response, status, code);
    return response.body.error as { message: string; field?: string; line?: number; index?: number };
  };

  it('refuses a body without a group, and an array that is never closed', async () => {
    const id = uniqueId('whole');
    expect((await refused(400, 'invalid_json', { rawBody: '  \n' })).message).toMatch(/NDJSON/);
    await refused(400, 'invalid_json', { rawBody: `[{"provided_id":"${id}"}`, array: true });
    await refused(400, 'invalid_json', { rawBody: `[{"provided_id":"${id}"}] x`, array: true });
  });

  it('refuses a group that is not UTF-8, naming its line or index', async () => {
    const latin1 = (open: string, close: string) =>
      Buffer.concat([
        Buffer.from(`${open}{"provided_id":"${uniqueId('utf8')}"}${open === '[' ? ',' : '\n'}{"provided_id":"caf`),
        Buffer.from([0xe9]),
        Buffer.from(`"}${close}`),
      ]);
    const line = await refused(400, 'invalid_json', { rawBody: latin1('', '\n') });
    expect(line).toMatchObject({ line: 2, message: expect.stringMatching(/^Line 2: .*UTF-8/) });
    const item = await refused(400, 'invalid_json', { rawBody: latin1('[', ']'), array: true });
    expect(item).toMatchObject({ index: 1, message: expect.stringMatching(/^Item 1: .*UTF-8/) });
  });

  it('refuses more than 10 000 groups, writing none of the first 10 000', async () => {
    const lines = Array.from({ length: 10_001 }, (_, i) => ({ provided_id: `many-${i}` }));
    expect((await refused(400, 'invalid_request', {}, lines)).message).toMatch(/at most 10000 user groups/);
  });

  it('refuses query values it does not take, naming the parameter', async () => {
    for (const [query, field] of [
      ['dry_run=yes', 'dry_run'],
      ['replace_tokens=1', 'replace_tokens'],
      // The CLI's --require-fields names: a typo is refused, never a requirement that never applies.
      ['require_fields=mapping,tokens', 'require_fields'],
      ['require_fields=', 'require_fields'],
      ['require_fields=team_id', 'require_fields'],
    ] as const) {
      const response = await expectUnchanged(fixture.t, () =>
        inject(fixture.t.app, {
          method: 'POST',
          path: `${IMPORT_PATH}?${query}`,
          token: fixture.t.tokens.default.Customer.admin,
          rawBody: `{"provided_id":"${uniqueId('query')}"}\n`,
          headers: { 'content-type': 'application/x-ndjson' },
        }),
      );
      expectError(response, 400, 'invalid_field', field);
    }
  });
});

describe('POST /api/admin/user_groups/import: lines refused in the summary', () => {
  const fixture = useTestApp();

  // `ugs groups import` refuses these lines with the same reasons (test/cli/import-file-forms.test.ts).
  it('refuses a line that is not JSON, not an object, has a key twice or a __proto__ key, and imports the others', async () => {
    const id = uniqueId('lines');
    const summary = await importOk(fixture.t, [], {
      rawBody: [
        `{"provided_id":"${id}-1"}`,
        `{"provided_id":`,
        `"text"`,
        `{"provided_id":"${id}-2","name":"a","name":"b"}`,
        `{"provided_id":"${id}-4","properties":{"__proto__":{"admin":true}}}`,
        `{"provided_id":"${id}-3"}`,
      ].join('\n'),
    });
    expect(summary).toEqual({
      dry_run: false,
      created: 2,
      updated: 0,
      unchanged: 0,
      rejected: [
        { line: 2, reason: 'not valid JSON' },
        { line: 3, reason: 'a line must be a JSON object' },
        { line: 4, reason: 'not valid JSON' },
        { line: 5, reason: 'not valid JSON' },
      ],
      // What each line lacked: asserted where the lacking lines are the subject.
      lacking: expect.any(Array),
      lacking_lines: expect.any(Number),
      lacking_fields: expect.any(Object),
    });
  });
});

describe('POST /api/admin/user_groups/import: a client that goes', () => {
  const fixture = useTestApp();
  let baseUrl: string;
  beforeAll(async () => {
    baseUrl = await fixture.t.listen();
  });
  const uploads: Array<{ abort: () => void }> = [];
  afterAll(() => uploads.forEach((upload) => upload.abort()));

  it('has nothing written when it goes before its body ends', async () => {
    const before = await snapshotDatabase(fixture.t);
    const prefix = uniqueId('gone');
    const upload = streamedUpload(baseUrl, {
      path: IMPORT_PATH,
      headers: {
        authorization: `Token ${fixture.t.tokens.default.Customer.admin}`,
        'content-type': 'application/x-ndjson',
      },
      body: pieces(50, (piece) =>
        Buffer.from(Array.from({ length: 100 }, (_, i) => `{"provided_id":"${prefix}-${piece}-${i}"}\n`).join('')),
      ),
      pauseAfterBytes: 4096,
      expectContinue: true,
    });
    uploads.push(upload);
    await upload.paused;
    upload.abort();
    await upload.result.catch(() => undefined);
    // The import runs only on a whole body: what was sent before the client went is not written.
    expect(await snapshotDatabase(fixture.t)).toEqual(before);
  });
});
