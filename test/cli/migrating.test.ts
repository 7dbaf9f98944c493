// What a move from the hosted product needs of the CLI, and its bad input: catalogue ids
// chosen with --id, and hosted tokens refused clearly when malformed, changing nothing.
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { auditEventCount, cleanUp, type ImportSummary, sandbox } from '../support/cli-sandbox.js';
import { expectCleanFailure, jsonOutput } from '../support/ugs-command.js';
import { writeJsonLines } from '../support/json-lines.js';

afterAll(cleanUp);

const UUID = '3f2b1c0e-7a4d-4e59-9b1a-6c2d8e0f4a17';

describe('ugs schemas|data-sources create --id', () => {
  it('keeps the chosen id; a taken or bad one fails cleanly and changes nothing', async () => {
    const box = sandbox();
    const schema = jsonOutput<{ id: number }>(
      await box.ugs('schemas', 'create', '--name', 'Sales', '--id', '40', '--json'),
    );
    expect(schema.id).toBe(40);
    const source = await box.ugs(
      'data-sources',
      'create',
      ...['--provided-id', '213', '--name', 'EU', '--schema-id', '40', '--environment', 'Customer', '--id', '213'],
    );
    expect(source.stdout.trim()).toBe('213');
    const before = auditEventCount(box);
    expectCleanFailure(await box.ugs('schemas', 'create', '--name', 'Again', '--id', '40'), /already exists.*id/i);
    for (const bad of ['0', '-1', '1.5', 'forty'])
      expectCleanFailure(await box.ugs('schemas', 'create', '--name', 'Bad', '--id', bad), /--id|id/);
    expectCleanFailure(
      await box.ugs('schemas', 'create', '--name', 'Bad', '--id', '2147483648'),
      /"id" must be a whole number from 1 to 2147483647/,
    );
    expect(auditEventCount(box)).toBe(before);
    // The next automatic id continues above the chosen one.
    expect((await box.ugs('schemas', 'create', '--name', 'Next')).stdout.trim()).toBe('41');
  });
});

describe('ugs groups import of hosted tokens', () => {
  it('refuses a malformed hosted token with a clear reason, importing nothing of that line', async () => {
    const box = sandbox();
    const lines = [
      { provided_id: 'short', token: 'a'.repeat(31) },
      { provided_id: 'jws', token: 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ' },
      { provided_id: 'space', token: `${UUID} x` },
      { provided_id: 'not-native', token: `ugt_${'A'.repeat(64)}` },
      { provided_id: 'too-long', token: 'a'.repeat(257) },
      { provided_id: 'uuid', token: UUID, team_id: 48213 },
    ];
    const file = join(box.dir, 'hosted.jsonl');
    writeJsonLines(file, lines);
    const result = await box.ugs('groups', 'import', file, '--json');
    expect(result.code).toBe(2);
    const summary = JSON.parse(result.stdout) as ImportSummary;
    expect(summary).toMatchObject({ created: 1, updated: 0, unchanged: 0 });
    expect(summary.rejected.map((rejected) => rejected.line)).toEqual([1, 2, 3, 4, 5]);
    for (const { reason } of summary.rejected) expect(reason).toMatch(/token/);
    expect(summary.rejected[1]!.reason).toMatch(/JWS/);
    const exported = await box.ugs('groups', 'export', '--include-tokens');
    const groups = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { provided_id: string; token: string; team_id: number });
    expect(groups.map((group) => [group.provided_id, group.token, group.team_id])).toEqual([['uuid', UUID, 48213]]);
  });
});

describe('ugs keys rotate with hosted tokens', () => {
  it('re-hashes them with their ciphertexts: they verify before, while the server runs on, and after a prune', async () => {
    const box = sandbox();
    const file = join(box.dir, 'hosted.jsonl');
    writeJsonLines(file, [{ provided_id: 'uuid', token: UUID }]);
    expect((await box.ugs('groups', 'import', file)).code).toBe(0);
    const server = await box.serve();
    const { Customer: apiToken } = server.adminTokens();
    const verify = () =>
      server.request({ method: 'POST', path: '/api/user/verify', token: apiToken, body: { token: UUID } });
    expect((await verify()).status).toBe(200);

    const rotated = jsonOutput<{ key_id: string; re_encrypted: { user_group_tokens: number } }>(
      await box.ugs('keys', 'rotate', '--json'),
    );
    expect(rotated.re_encrypted.user_group_tokens).toBe(1);
    // The row is hashed under the new key now; the running server finds it (it refreshes its keys on a miss).
    expect((await verify()).body).toMatchObject({ success: 1, user_group: { provided_id: 'uuid', token: UUID } });
    expect((await box.ugs('keys', 'prune')).code).toBe(0);
    await server.stop();
    const restarted = await box.serve();
    const answer = await restarted.request({
      method: 'POST',
      path: '/api/user/verify',
      token: apiToken,
      body: { token: UUID },
    });
    expect(answer.status).toBe(200);
  });
});
