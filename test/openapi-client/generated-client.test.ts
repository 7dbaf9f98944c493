import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.js';

const REPO = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'ugs-openapi-client-'));
const PROGRAM = join(import.meta.dirname, 'generated-client.program.ts');
// Asynchronous: the server under test answers from this same process.
const run = (name: string, args: string[], env: Record<string, string> = {}) =>
  promisify(execFile)(join(REPO, 'node_modules', '.bin', name), args, {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });

/**
 * Issue 26: a client generated from the live /openapi.json (openapi-typescript's types, openapi-fetch's
 * calls) is enough to write the usual calls without a cast, and they work against a real server
 * over a real socket.
 */
describe('a client generated from /openapi.json', () => {
  let t: TestApp;
  let baseUrl: string;

  beforeAll(async () => {
    t = await createTestApp();
    baseUrl = await t.listen();
    // The scratch project resolves openapi-fetch, TypeScript's Node types and tsx from the repository's.
    symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noUncheckedIndexedAccess: true,
          noEmit: true,
          types: ['node'],
        },
        files: ['program.ts'],
      }),
    );
    copyFileSync(PROGRAM, join(dir, 'program.ts'));
  });

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is written without a cast or an any', () => {
    const code = readFileSync(PROGRAM, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '');
    // `as`, `any`, a non-null assertion (x!), a directive silencing the compiler.
    expect(code).not.toMatch(/\bas\b|\bany\b|[\w)\]]!(?!=)|@ts-/);
  });

  it('type-checks (strict) against the types generated from the live document, then runs against the server', async () => {
    const live = await fetch(`${baseUrl}/openapi.json`);
    expect(live.status).toBe(200);
    writeFileSync(join(dir, 'openapi.json'), await live.text());
    await run('openapi-typescript', ['openapi.json', '-o', 'openapi-types.ts']);
    // Rejects, with the compiler's messages, on any type error.
    await run('tsc', ['-p', 'tsconfig.json']);

    const { stdout } = await run('tsx', ['program.ts'], {
      UGS_URL: baseUrl,
      UGS_TOKEN: t.tokens.default.Customer.admin,
    });
    const result = JSON.parse(stdout);
    expect(result).toEqual({
      created: { new_user_group: true, is_demo_group: true, tags: ['generated'] },
      properties: { plan: 'pro' },
      updatedName: 'Generated client, renamed',
      rotated: true,
      verifiedTeamId: result.teamId,
      staleTokenStatus: 404,
      staleTokenCode: 'user_group_not_found',
      listedProvidedIds: ['generated-client-group'],
      auditActions: expect.arrayContaining(['user_group.created', 'user_group.updated', 'user_group.token_rotated']),
      deleted: 1,
      goneCode: 'user_group_not_found',
      teamId: expect.any(Number),
    });
  }, 180_000); // generating, compiling and running a program: seconds each on a busy machine
});
