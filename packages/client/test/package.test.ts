// @ugs/client as another project gets it: `npm pack`, the tarball installed alone into a
// scratch project outside the repository, a program using every method group type-checked there
// (strict, with Node's resolution and with a bundler's) and run against a live server.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/support/test-app.js';

const run = promisify(execFile);
const CLIENT = fileURLToPath(new URL('..', import.meta.url));
const TSC = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));
const PROGRAM = fileURLToPath(new URL('installed/program.ts', import.meta.url));

/** What the tarball may hold: the client's own build, the wire schemas and their leaf of constants, its docs. */
const ALLOWED = [
  /^package\.json$/,
  /^README\.md$/,
  /^LICENSE$/,
  /^dist\/packages\/client\/src\/[a-z-]+(\/[a-z-]+)?\.(js|d\.ts)$/,
  /^dist\/src\/wire\/([a-z-]+\.schemas|contract\.constants|envelope)\.(js|d\.ts)$/,
];

let scratch: string;
let files: string[];
let t: TestApp;
let baseUrl = '';

const strict = {
  strict: true,
  noUncheckedIndexedAccess: true,
  target: 'ES2022',
  lib: ['ES2022', 'DOM'],
  types: [],
};

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'ugs-client-install-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: CLIENT });
  const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{
    filename: string;
    files: { path: string }[];
  }>;
  files = packed!.files.map((file) => file.path);
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
  await run('npm', ['install', `./${packed!.filename}`, '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: scratch,
  });
  cpSync(PROGRAM, join(scratch, 'program.ts'));
  t = await createTestApp({ publicUrl: () => baseUrl, webhooks: { allowPrivate: true } });
  baseUrl = await t.listen();
}, 240_000);

afterAll(async () => {
  await t?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('@ugs/client installed from its tarball', () => {
  it('holds its own build, the wire schemas and their constants, and no server module', () => {
    expect(files).toContain('dist/packages/client/src/index.js');
    expect(files).toContain('dist/packages/client/src/crypto/node.js');
    expect(files).toContain('dist/packages/client/src/crypto/web.js');
    expect(files).toContain('dist/src/wire/user-groups.schemas.d.ts');
    expect(files.filter((file) => !ALLOWED.some((pattern) => pattern.test(file)))).toEqual([]);
    expect(files.filter((file) => /(^|\/)(domain|store|http|cli|webhooks)\//.test(file))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(scratch, 'node_modules/@ugs/client/package.json'), 'utf8'));
    expect(manifest).toMatchObject({ license: 'Apache-2.0', dependencies: { jose: expect.any(String) } });
    expect(manifest.private).toBeUndefined();
    // The scratch project installed the tarball and its declared dependencies, nothing of the repository.
    expect(readFileSync(join(scratch, 'package.json'), 'utf8')).not.toContain('user-group-service');
  });

  it(
    'type-checks a program using every method group, with Node resolution and with a bundler resolution',
    { timeout: 300_000 },
    async () => {
      // Node's resolution checks the declarations too (an import of a package the client does not
      // depend on fails there, slowly: typebox's types are large); the bundler's takes them as they are.
      const node = { ...strict, module: 'NodeNext', moduleResolution: 'NodeNext', outDir: 'out', skipLibCheck: false };
      const bundler = { ...strict, module: 'ESNext', moduleResolution: 'Bundler', noEmit: true, skipLibCheck: true };
      writeFileSync(join(scratch, 'tsconfig.json'), JSON.stringify({ compilerOptions: node, files: ['program.ts'] }));
      writeFileSync(
        join(scratch, 'tsconfig.bundler.json'),
        JSON.stringify({ compilerOptions: bundler, files: ['program.ts'] }),
      );
      for (const config of ['tsconfig.json', 'tsconfig.bundler.json']) {
        const checked = await run(process.execPath, [TSC, '-p', config], { cwd: scratch }).catch(
          (error: { stdout: string }) => error,
        );
        expect(checked.stdout, config).toBe('');
      }
    },
  );

  it('runs against a live server', { timeout: 60_000 }, async () => {
    const { stdout } = await run(process.execPath, ['out/program.js', baseUrl, t.tokens.default.Customer.admin], {
      cwd: scratch,
    });
    expect(JSON.parse(stdout)).toEqual({
      newUserGroup: true,
      mappingResolved: true,
      updated: { plan: 'team' },
      verifiedTeam: true,
      embedSubject: 'packed-1',
      embedOnline: 'board',
      accessFilter: ['FALSE', '("sales"."orders"."region" = ANY($1))', [['eu', 'us']], 'rules[0].column'],
      schemaListed: true,
      dataSourceListed: true,
      renamed: true,
      group: 'packed-1',
      tokenLimit: { per_second: 5, burst: 10 },
      tokenListed: true,
      audited: 'api_token.revoked',
      currentKey: true,
      endpointListed: true,
      disabled: true,
      deliveries: 0,
      webhookEvent: 'user_group.deleted',
      forged: 'refused',
      missing: [404, 'user_group_not_found'],
    });
  });
});
