// The release as an operator gets it: `npm run release` once, its tarball installed alone into an
// empty folder with production dependencies only (offline: every dependency is inside it), then
// `ugs serve` from that install, without compiling anything: the README's calls against it, SIGTERM
// to stop it; and the same install run as the image runs it (test/release/dockerfile.test.ts), as
// PID 1 of its own PID namespace under a non-root user, drained by SIGTERM.
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerfileInstructions, envPairs, execForm } from '../support/dockerfile.js';
import { freePort } from '../support/free-port.js';
import { heldGetOrCreate } from '../support/held-request.js';
import { send } from '../support/http-client.js';
import { expectReadmeExamplesToPass } from '../support/readme-examples.js';
import { startServeProcess, stopAllServeProcesses } from '../support/serve-process.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';
import { REPO, ugsEnv } from '../support/ugs-command.js';
import { waitFor } from '../support/wait-for.js';

const run = promisify(execFile);
const manifest = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  devDependencies: Record<string, string>;
};
/** What would compile TypeScript or build the console: none of it may be installed. */
const COMPILERS = ['typescript', 'tsx', 'vite', 'esbuild', 'rolldown', 'oxc-transform'];
/** The image's non-root user is `node` (uid 1000 in the official images); here a user every Debian has. */
const NOBODY = { uid: 65534, gid: 65534 };

let out: string;
let tarball: string;
let install: string;
let packageDir: string;
let ugs: string;

interface Installed {
  name: string;
  version: string;
  /** Relative to the release's own folder (`node_modules/fastify`), as in its npm-shrinkwrap.json. */
  location: string;
}

/** Every package under `dir`'s node_modules, nested ones included. */
function installedPackages(dir: string, base = dir): Installed[] {
  const modules = join(dir, 'node_modules');
  if (!existsSync(modules)) return [];
  return readdirSync(modules)
    .filter((name) => !name.startsWith('.'))
    .flatMap((name) =>
      name.startsWith('@') ? readdirSync(join(modules, name)).map((sub) => `${name}/${sub}`) : [name],
    )
    .flatMap((name) => {
      const path = join(modules, name);
      const { version } = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) as { version: string };
      return [{ name, version, location: relative(base, path) }, ...installedPackages(path, base)];
    });
}

/** Every file under `dir` with its size and modification time: what a start must leave as it is. */
function fileSnapshot(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => {
        const path = join(entry.parentPath, entry.name);
        const stats = statSync(path);
        return [relative(dir, path), `${stats.size} ${stats.mtimeMs}`];
      }),
  );
}

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), 'ugs-release-'));
  await run('npm', ['run', 'release', '--silent', '--', '--out', out], { cwd: REPO, maxBuffer: 64 * 1024 * 1024 });
  tarball = join(out, `ugs-${manifest.version}.tgz`);
  install = join(out, 'install');
  mkdirSync(install);
  // The registry cannot serve the SQLite binding prebuilt here: it compiles from source (Node's headers), or
  // unpacks the build .ci/run kept for this Node (npm_config_better_sqlite3_local_prebuilds), as a user's
  // install unpacks the prebuilt one from GitHub.
  await run('npm', ['install', '--omit=dev', '--offline', '--no-audit', '--no-fund', tarball], {
    cwd: install,
    maxBuffer: 64 * 1024 * 1024,
  });
  packageDir = join(install, 'node_modules', manifest.name);
  ugs = join(install, 'node_modules', '.bin', 'ugs');
  // mkdtemp makes the folder its owner's alone; the non-root user below must read the install.
  chmodSync(out, 0o755);
}, 20 * 60_000);

afterAll(async () => {
  await stopAllServeProcesses();
  if (out) rmSync(out, { recursive: true, force: true });
});

describe('the release artefact', () => {
  it('is one tarball with its checksum, as sha256sum -c reads it', () => {
    const sha256 = createHash('sha256').update(readFileSync(tarball)).digest('hex');
    expect(readFileSync(`${tarball}.sha256`, 'utf8')).toBe(`${sha256}  ugs-${manifest.version}.tgz\n`);
  });

  it('holds the compiled server, the console, bin/ugs.js, README, LICENSE and a shrinkwrap, and no sources', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball], { maxBuffer: 64 * 1024 * 1024 });
    const files = stdout.split('\n').filter(Boolean);
    for (const file of [
      'dist/cli/main.js',
      'dist/server.js',
      'dist/console/index.html',
      'bin/ugs.js',
      'README.md',
      'LICENSE',
      'npm-shrinkwrap.json',
      'package.json',
    ])
      expect(files).toContain(`package/${file}`);
    const own = files.filter((file) => !file.startsWith('package/node_modules/'));
    expect(own.filter((file) => /^package\/(src|test|console|scripts|packages)\//.test(file))).toEqual([]);
    expect(own.filter((file) => /\.(ts|map)$|\.build-stamp/.test(file) && !file.endsWith('.d.ts'))).toEqual([]);
    expect(files.some((file) => file.startsWith('package/dist/console/assets/'))).toBe(true);
  });

  it('comes with a CycloneDX SBOM naming the release and exactly the packages it installs', () => {
    const sbom = JSON.parse(readFileSync(join(out, `ugs-${manifest.version}.cdx.json`), 'utf8')) as {
      bomFormat: string;
      metadata: { component: { version: string } };
      components: { name: string; group?: string; version: string }[];
    };
    expect(sbom.bomFormat).toBe('CycloneDX');
    expect(sbom.metadata.component.version).toBe(manifest.version);
    const listed = new Set(sbom.components.map((c) => `${c.group ? `${c.group}/` : ''}${c.name}@${c.version}`));
    const installed = new Set(installedPackages(packageDir).map((p) => `${p.name}@${p.version}`));
    expect([...listed].sort()).toEqual([...installed].sort());
  });
});

describe('installed alone with production dependencies only', () => {
  it('holds no devDependency, no workspace package and nothing that compiles', () => {
    const names = new Set(installedPackages(install).map((p) => p.name));
    expect(names.has(manifest.name)).toBe(true);
    const forbidden = [...Object.keys(manifest.devDependencies), '@ugs/client', ...COMPILERS];
    expect(forbidden.filter((name) => names.has(name))).toEqual([]);
    const installedManifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as object;
    expect(installedManifest).not.toHaveProperty('scripts');
    expect(installedManifest).not.toHaveProperty('devDependencies');
  });

  it('has every dependency at the version the repository locked (its npm-shrinkwrap.json), and a valid tree', async () => {
    const shrinkwrap = JSON.parse(readFileSync(join(packageDir, 'npm-shrinkwrap.json'), 'utf8')) as {
      packages: Record<string, { version?: string }>;
    };
    const lockfile = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as typeof shrinkwrap;
    const installed = installedPackages(packageDir);
    expect(installed.map((p) => p.location).sort()).toEqual(
      Object.keys(shrinkwrap.packages)
        .filter((key) => key !== '')
        .sort(),
    );
    for (const { location, version } of installed) {
      expect(version, location).toBe(shrinkwrap.packages[location]?.version);
      expect(version, location).toBe(lockfile.packages[location]?.version);
    }
    // npm itself finds nothing missing or invalid.
    await run('npm', ['ls', '--all', '--omit=dev'], { cwd: install, maxBuffer: 16 * 1024 * 1024 });
  });

  it('built the SQLite binding on install, and puts ugs on PATH, which says its version', async () => {
    const binding = join(packageDir, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');
    expect(existsSync(binding)).toBe(true);
    const { stdout } = await run('ugs', ['--version'], {
      env: { ...process.env, PATH: `${join(install, 'node_modules/.bin')}:${process.env.PATH}` },
    });
    expect(stdout.trim()).toBe(manifest.version);
  });
});

describe('ugs serve from the installed release', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it(
    'starts without compiling or writing into the release, answers the README, stops on SIGTERM',
    { timeout: 120_000 },
    async () => {
      const before = fileSnapshot(packageDir);
      const workdir = join(out, 'workdir');
      mkdirSync(workdir);
      const server = await startServeProcess(db, { ugs, cwd: workdir });
      const health = await server.request({ method: 'GET', path: '/healthz' });
      expect(health.body).toEqual({ status: 'ok', version: manifest.version });
      // The console's built assets came with the release.
      const console = await fetch(`${server.baseUrl}/console/`);
      expect(console.status).toBe(200);
      expect(console.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await console.text()).toContain('/console/assets/');

      await expectReadmeExamplesToPass(server);

      expect(await server.stop('SIGTERM')).toBe(0);
      expect(fileSnapshot(packageDir)).toEqual(before);
    },
  );
});

describe('run as the image runs it', () => {
  it(
    'is PID 1 of its PID namespace under a non-root user, passes the health check, and drains on SIGTERM',
    { timeout: 120_000 },
    async () => {
      expect(process.getuid?.(), 'this test makes a PID namespace and changes user: run it as root').toBe(0);
      const instructions = dockerfileInstructions();
      const runtime = Math.max(...instructions.map(({ stage }) => stage));
      const of = (keyword: string) => instructions.filter((i) => i.stage === runtime && i.keyword === keyword);
      const data = join(out, 'data');
      mkdirSync(data);
      chownSync(data, NOBODY.uid, NOBODY.gid);
      // The image's paths, here: /opt/ugs is the install, /data a folder the user owns; the port a free one.
      const local = (value: string) =>
        value
          .replaceAll('/opt/ugs', install)
          .replace(/(^|[:=])\/data\b/g, `$1${data}`)
          .replace('$PATH', `${nodeBin}:${process.env.PATH!}`);
      // The image's Node is on a path every user reads (/usr/local/bin); this test's may not be (a Node
      // installed under root's home, as CI installs each LTS line): the user gets a copy of it.
      const nodeBin = join(out, 'node-bin');
      mkdirSync(nodeBin, { mode: 0o755 });
      copyFileSync(process.execPath, join(nodeBin, 'node'));
      chmodSync(join(nodeBin, 'node'), 0o755);
      const port = await freePort();
      // The image's environment: none of the test's UGS_ settings (ugsEnv's rate limit included).
      const { UGS_RATE_LIMIT: _rateLimit, ...base } = ugsEnv();
      const env: NodeJS.ProcessEnv = {
        ...base,
        ...Object.fromEntries(
          of('ENV')
            .flatMap(({ args }) => envPairs(args))
            .map(([name, value]) => [name, local(value)]),
        ),
        UGS_PORT: String(port),
      };
      const asUser = ['setpriv', `--reuid=${NOBODY.uid}`, `--regid=${NOBODY.gid}`, '--clear-groups', '--'];
      const options = { cwd: local(of('WORKDIR').at(-1)!.args), env };

      // An admin token made beforehand, as an operator would with `ugs tokens create`.
      const created = await run(
        asUser[0]!,
        [...asUser.slice(1), 'ugs', 'tokens', 'create', '--environment', 'Customer', '--scope', 'admin', '--json'],
        options,
      );
      const { token } = JSON.parse(created.stdout) as { token: string };

      const unshare = spawn('unshare', ['--pid', '--fork', ...asUser, ...execForm(of('CMD').at(-1)!.args)], {
        ...options,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      unshare.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      unshare.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      const exited = new Promise<number | null>((resolve) => unshare.once('exit', (code) => resolve(code)));
      try {
        const baseUrl = `http://127.0.0.1:${port}`;
        await waitFor('the server to answer /healthz', 30_000, async () =>
          (await send(baseUrl, { method: 'GET', path: '/healthz' })).status === 200 ? true : undefined,
        );
        // The server is unshare's child: PID 1 in its namespace, running as the user.
        const children = readFileSync(`/proc/${unshare.pid}/task/${unshare.pid}/children`, 'utf8').trim().split(' ');
        expect(children).toHaveLength(1);
        const status = readFileSync(`/proc/${children[0]}/status`, 'utf8');
        expect(/^NSpid:\s+\d+\s+(\d+)$/m.exec(status)?.[1]).toBe('1');
        expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).toBe(String(NOBODY.uid));
        expect(readFileSync(`/proc/${children[0]}/cmdline`, 'utf8').split('\0')).toContain('serve');

        // The image's HEALTHCHECK command, as Docker would run it in the container.
        const [check] = of('HEALTHCHECK');
        const [file, ...args] = execForm(check!.args.slice(check!.args.indexOf('CMD ') + 4));
        await run(asUser[0]!, [...asUser.slice(1), file!, ...args], options);

        // SIGTERM to PID 1 (which only gets the signals it handles) while a request is in flight.
        const held = heldGetOrCreate(baseUrl, token, 'pid_1');
        await held.accepted;
        process.kill(Number(children[0]), 'SIGTERM');
        await waitFor(
          'the server to begin draining',
          10_000,
          () => output.includes('draining before exit') || undefined,
        );
        held.finish();
        expect((await held.response).status).toBe(200);
        expect(await exited, output).toBe(0);
      } finally {
        unshare.kill('SIGKILL');
      }
    },
  );
});
