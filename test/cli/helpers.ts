// Drives the built `ugs` binary (bin/ugs.js → dist/) as a user would: real processes, real SQLite
// files in temp dirs, real sockets. `npm test` builds first; run `npm run build` before
// `npx vitest run test/cli` on its own.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { send, type ApiRequest, type ApiResponse } from '../support/http-client.js';

export const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const UGS_BIN = join(REPO, 'bin', 'ugs.js');

if (!existsSync(join(REPO, 'dist', 'cli', 'main.js'))) {
  throw new Error('dist/ is missing: run `npm run build` (or `npm test`, which builds) before the CLI tests.');
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Added to a copy of this process's environment from which every UGS_* variable was removed. */
  env?: Record<string, string>;
  cwd?: string;
}

/** The environment a test controls fully: no UGS_* leaks in from the shell, rate limiting off. */
export function ugsEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('UGS_')));
  return { ...env, UGS_RATE_LIMIT: 'off', ...extra };
}

/** Runs a command to its end and returns its exit code and output. */
export function run(file: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolvePromise) => {
    execFile(file, args, { env: ugsEnv(options.env), cwd: options.cwd ?? REPO, timeout: 20_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolvePromise({ code, stdout, stderr });
    });
  });
}

/** `ugs <args>` through bin/ugs.js with the running Node. */
export function runUgs(args: string[], options: RunOptions = {}): Promise<RunResult> {
  return run(process.execPath, [UGS_BIN, ...args], options);
}

/** A port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolvePromise(port));
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((resolvePromise) => setTimeout(resolvePromise, ms));

/** Polls `probe` until it returns a value other than undefined; throws after `timeoutMs`. */
export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

export interface ServerProcess {
  process: ChildProcess;
  port: number;
  url: string;
  /** Everything the process wrote so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
  /** Sends `signal` (SIGTERM by default) and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  request(req: ApiRequest): Promise<ApiResponse>;
}

const running = new Set<ServerProcess>();

/** Spawns `ugs serve <args>` with UGS_PORT=`port` and returns at once, without waiting for it to listen. */
export function spawnServe(args: string[], port: number, options: RunOptions = {}): ServerProcess {
  const child = spawn(process.execPath, [UGS_BIN, 'serve', ...args], {
    env: ugsEnv({ UGS_PORT: String(port), ...options.env }),
    cwd: options.cwd ?? REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolvePromise) => child.once('exit', (code) => resolvePromise(code)));
  const url = `http://127.0.0.1:${port}`;
  const server: ServerProcess = {
    process: child,
    port,
    url,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    request: (req) => send(url, req),
  };
  running.add(server);
  void exited.then(() => running.delete(server));
  return server;
}

/**
 * Starts `ugs serve` on a free port (given as UGS_PORT, so `args` may override it) and waits until
 * /healthz answers. Retries on another port if the chosen one was taken in between.
 */
export async function startServer(args: string[], options: RunOptions = {}): Promise<ServerProcess> {
  for (let attempt = 1; ; attempt++) {
    const server = spawnServe(args, await freePort(), options);
    const outcome = await Promise.race([
      waitFor(async () => ((await server.request({ method: 'GET', path: '/healthz' })).status === 200 ? 'up' : undefined), 15_000, 'ugs serve to answer /healthz'),
      server.exited.then(() => 'exited' as const),
    ]);
    if (outcome === 'up') return server;
    if (attempt < 3 && /EADDRINUSE/.test(server.stderr())) continue;
    throw new Error(`ugs serve exited before answering /healthz\nstdout:\n${server.stdout()}\nstderr:\n${server.stderr()}`);
  }
}

/** Kills whatever server a test left running; call in afterEach. */
export async function stopAllServers(): Promise<void> {
  await Promise.all([...running].map((server) => server.stop('SIGKILL')));
}

/** A temp dir with a database path in it; `ugs()` runs a command against that database. */
export interface Sandbox {
  dir: string;
  databasePath: string;
  databaseUrl: string;
  /** `ugs <args> --database sqlite:<dir>/ugs.db`. */
  ugs(...args: string[]): Promise<RunResult>;
  /** `ugs serve --database sqlite:<dir>/ugs.db` on a free port. */
  serve(options?: RunOptions): Promise<ServerProcess>;
}

const sandboxes: string[] = [];

export function sandbox(): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), 'ugs-cli-'));
  sandboxes.push(dir);
  const databasePath = join(dir, 'ugs.db');
  const databaseUrl = `sqlite:${databasePath}`;
  return {
    dir,
    databasePath,
    databaseUrl,
    ugs: (...args) => runUgs([...args, '--database', databaseUrl]),
    serve: (options) => startServer(['--database', databaseUrl], options),
  };
}

/** Stops the servers, then removes the temp dirs; call in afterEach. */
export async function cleanUp(): Promise<void> {
  await stopAllServers();
  for (const dir of sandboxes.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export const LIVE_TOKEN = /ugs_live_[0-9a-f]{64}/g;
export const TEST_TOKEN = /ugs_test_[0-9a-f]{64}/g;

/** The distinct API token secrets of one kind in some output. */
export function secretsIn(output: string, pattern: RegExp): string[] {
  return [...new Set(output.match(pattern) ?? [])];
}

/** The two first-start admin tokens from a server's banner (fails the test if there are not exactly two). */
export function bannerTokens(server: ServerProcess): { Customer: string; Testing: string } {
  const live = secretsIn(server.stdout(), LIVE_TOKEN);
  const test = secretsIn(server.stdout(), TEST_TOKEN);
  if (live.length !== 1 || test.length !== 1) {
    throw new Error(`expected one ugs_live_ and one ugs_test_ token in the banner, got ${live.length} and ${test.length}:\n${server.stdout()}`);
  }
  return { Customer: live[0]!, Testing: test[0]! };
}

/** GET /api/user with a JSON body: get or create the group `userGroupId`. */
export function getOrCreate(server: ServerProcess, token: string, body: Record<string, unknown>): Promise<ApiResponse> {
  return server.request({ method: 'GET', path: '/api/user', token, body });
}
