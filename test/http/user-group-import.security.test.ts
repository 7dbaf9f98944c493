// POST /api/admin/user_groups/import and the secrets it carries: the tokens of an import never come
// back (not in a refusal, a summary, a log line or an idempotency record), never tell whether another
// workspace has a token, and never leave the API token's workspace and environment.
import { createHash, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, requestFingerprint } from '../../src/domain/idempotency/idempotency.rules.js';
import { nativeToken } from '../support/import-cases.js';
import { useTestApp } from '../support/test-app.js';
import { uniqueId } from '../support/unique-id.js';
import { ADMIN, adminOk } from './admin-helpers.js';
import { expectError, expectSuccess, expectUnchanged, snapshotDatabase } from './helpers.js';
import { expectNothingWritten, IMPORT_PATH, importCall, importOk } from './import-helpers.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('POST /api/admin/user_groups/import: tokens never come back', () => {
  const logs: string[] = [];
  const fixture = useTestApp({
    log: { level: 'trace', destination: { write: (line: string) => void logs.push(line) } },
  });

  it('echoes no token in a refusal or the summary, for every kind of bad line, nor in the logs', async () => {
    const { t } = fixture;
    const held = randomUUID();
    const secrets = [held, randomUUID(), randomUUID(), randomUUID(), randomUUID(), nativeToken('c'), randomUUID()];
    const [, taken, unknownField, badName, otherEnvironment, native, tooLong] = secrets as string[] & { length: 7 };
    await importOk(t, [{ provided_id: uniqueId('holder'), token: held }]);
    const lines = [
      { provided_id: uniqueId('taken'), token: held },
      { provided_id: uniqueId('dup-1'), token: taken },
      { provided_id: uniqueId('dup-2'), token: taken },
      { provided_id: uniqueId('field'), token: unknownField, colour: 'red' },
      { provided_id: uniqueId('name'), token: badName, name: '' },
      { provided_id: uniqueId('env'), token: otherEnvironment, api_environment_tag: 'Testing' },
      { provided_id: uniqueId('shape'), token: `${native}.x` },
      { provided_id: uniqueId('long'), token: `${tooLong}`.repeat(8) },
      { provided_id: uniqueId('type'), token: { value: native } },
      `{"provided_id": "broken", "token": "${native}", `,
      { provided_id: uniqueId('json'), token: native, token_again: native },
      // A line that is nothing but a token, as a JSON string.
      JSON.stringify(native),
    ];
    logs.length = 0;
    for (const form of ['lines', 'array'] as const) {
      const response =
        form === 'lines'
          ? await importCall(t, lines)
          : await importCall(t, [], {
              rawBody: `[${lines
                .slice(0, -2)
                .map((line) => JSON.stringify(line))
                .join(',')}]`,
              array: true,
            });
      const summary = expectSuccess(response).import;
      expect(summary.rejected.length).toBeGreaterThanOrEqual(form === 'lines' ? 11 : 8);
      for (const secret of secrets) {
        expect(response.raw).not.toContain(secret);
        expect(response.raw).not.toContain(sha256(secret));
      }
    }
    // A body refused whole (its media type) says nothing of what it carries either.
    const refused = await importCall(t, lines, { headers: { 'content-type': 'text/plain' } });
    expectError(refused, 415, 'unsupported_media_type');
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(logs.join('\n')).not.toContain(secret);
  });
});

describe('POST /api/admin/user_groups/import: another workspace is invisible', () => {
  const fixture = useTestApp();

  it("refuses a token another workspace's group holds exactly as one of its own environment's, naming neither", async () => {
    const { t } = fixture;
    const [elsewhere, testing, own] = [randomUUID(), randomUUID(), randomUUID()];
    await importOk(t, [{ provided_id: uniqueId('theirs'), token: elsewhere }], { as: { workspace: 'other' } });
    await importOk(t, [{ provided_id: uniqueId('testing'), token: testing }], { as: { environment: 'Testing' } });
    await importOk(t, [{ provided_id: uniqueId('ours'), token: own }]);

    const reasons: string[] = [];
    for (const token of [elsewhere, testing, own]) {
      const summary = await expectNothingWritten(t, () => importOk(t, [{ provided_id: uniqueId('claim'), token }]));
      expect(summary).toMatchObject({ created: 0, updated: 0, unchanged: 0 });
      reasons.push(summary.rejected[0]!.reason);
    }
    expect(new Set(reasons).size).toBe(1);
    expect(reasons[0]).not.toMatch(/workspace|environment|\bother\b|Testing/i);
    // A dry run looks in the caller's own environment only: another's token is found by the write alone.
    const dry = (token: string) => importOk(t, [{ provided_id: uniqueId('dry-claim'), token }], { dryRun: true });
    expect(await dry(elsewhere)).toMatchObject({ created: 1, rejected: [] });
    expect(await dry(testing)).toMatchObject({ created: 1, rejected: [] });
    expect((await dry(own)).rejected).toEqual([{ line: 1, reason: reasons[0] }]);
  });

  it("writes only into its API token's workspace and environment; a line cannot name the other environment", async () => {
    const { t } = fixture;
    const id = uniqueId('mine');
    await importOk(t, [{ provided_id: id, name: 'Theirs' }], { as: { workspace: 'other' } });
    const summary = await importOk(t, [
      { provided_id: id, name: 'Mine' },
      { provided_id: `${id}-testing`, api_environment_tag: 'Testing' },
      { provided_id: `${id}-customer`, api_environment_tag: 'Customer' },
      { provided_id: `${id}-untagged`, api_environment_tag: null },
    ]);
    expect(summary).toMatchObject({ created: 3, rejected: [{ line: 2, reason: expect.stringMatching(/"Customer"/) }] });
    const names = async (as: { workspace?: 'other'; environment?: 'Testing' }) =>
      (await adminOk(t, { path: ADMIN.userGroups, query: { q: id }, as })).user_groups.map(
        (group: { provided_id: string; name: string }) => `${group.provided_id}:${group.name}`,
      );
    expect(await names({ workspace: 'other' })).toEqual([`${id}:Theirs`]);
    expect(await names({ environment: 'Testing' })).toEqual([]);
  });

  it.each(['read', 'write'] as const)('refuses a %s API token, changing nothing', async (scope) => {
    const response = await expectUnchanged(fixture.t, () =>
      importCall(fixture.t, [{ provided_id: uniqueId('scope') }], { as: { scope } }),
    );
    expectError(response, 403, 'insufficient_scope');
  });
});

describe('POST /api/admin/user_groups/import: Idempotency-Key without tokens in its record', () => {
  const fixture = useTestApp();

  it('replays a retry, refuses the key with other tokens, and keeps neither a token nor a plain hash of one', async () => {
    const { t } = fixture;
    const token = randomUUID();
    const lines = [{ provided_id: uniqueId('keyed'), token }];
    const headers = { 'idempotency-key': uniqueId('import-key') };
    const first = await importCall(t, lines, { headers });
    expect(expectSuccess(first).import).toMatchObject({ created: 1 });
    const retry = await importCall(t, lines, { headers });
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(first.body);
    // The fingerprint tells the tokens apart…
    const other = await importCall(t, [{ ...lines[0], token: randomUUID() }], { headers });
    expectError(other, 409, 'idempotency_key_reused');

    // …without holding one, or the fingerprint a plain digest of the lines would give.
    const rows = (await snapshotDatabase(t)).idempotency_keys ?? [];
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows);
    const items = lines.map((group, index) => ({ at: { line: index + 1 }, line: { line: index + 1, group } }));
    const plainDigest = sha256(items.map((item) => `${canonicalJson(item)}\n`).join(''));
    const plainFingerprint = requestFingerprint({
      method: 'POST',
      route: IMPORT_PATH,
      params: {},
      query: {},
      body: { items_sha256: plainDigest },
    });
    for (const secret of [token, sha256(token), plainDigest, plainFingerprint]) expect(stored).not.toContain(secret);
  });
});
