// Drives the built `ugs` binary (bin/ugs.js → dist/) as a user would: real processes, real SQLite
// files in temp dirs, real sockets. `npm test` builds first; run `npm run build` before
// `npx vitest run test/cli` on its own.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { send, type ApiRequest, type ApiResponse } from '../support/http-client.js';
import { freePort } from '../support/free-port.js';

export { freePort };

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
  /** Written to the command's stdin, which is then closed (left open and empty when absent). */
  input?: string;
  /** spawnServe only: start the server as an operator would, with `npm start -- <args>`. */
  viaNpmStart?: boolean;
  /** startServer only: how long the server may take to answer /healthz (15 s unless given). */
  startTimeoutMs?: number;
}

/** The environment a test controls fully: no UGS_* leaks in from the shell, rate limiting off. */
export function ugsEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('UGS_')));
  return { ...env, UGS_RATE_LIMIT: 'off', ...extra };
}

/** Runs a command to its end and returns its exit code and output. */
export function run(file: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolvePromise) => {
    const child = execFile(
      file,
      args,
      { env: ugsEnv(options.env), cwd: options.cwd ?? REPO, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolvePromise({ code, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** `ugs <args>` through bin/ugs.js with the running Node. */
export function runUgs(args: string[], options: RunOptions = {}): Promise<RunResult> {
  return run(process.execPath, [UGS_BIN, ...args], options);
}

import { sleep, waitFor } from '../support/wait-for.js';

export { sleep, waitFor };

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
  const [file, commandArgs] = options.viaNpmStart
    ? ['npm', ['start', '--silent', '--', ...args]]
    : [process.execPath, [UGS_BIN, 'serve', ...args]];
  const child = spawn(file, commandArgs, {
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
      waitFor('ugs serve to answer /healthz', options.startTimeoutMs ?? 15_000, async () =>
        (await server.request({ method: 'GET', path: '/healthz' })).status === 200 ? 'up' : undefined,
      ),
      server.exited.then(() => 'exited' as const),
    ]);
    if (outcome === 'up') return server;
    if (attempt < 3 && /EADDRINUSE/.test(server.stderr())) continue;
    throw new Error(
      `ugs serve exited before answering /healthz\nstdout:\n${server.stdout()}\nstderr:\n${server.stderr()}`,
    );
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
  /** The same, with `input` on the command's stdin. */
  ugsWithStdin(input: string, ...args: string[]): Promise<RunResult>;
  /** The same, with extra environment variables (UGS_ENCRYPTION_KEY, UGS_WEBHOOK_ALLOW_PRIVATE). */
  ugsWith(env: Record<string, string>, ...args: string[]): Promise<RunResult>;
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
    ugsWithStdin: (input, ...args) => runUgs([...args, '--database', databaseUrl], { input }),
    ugsWith: (env, ...args) => runUgs([...args, '--database', databaseUrl], { env }),
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
    throw new Error(
      `expected one ugs_live_ and one ugs_test_ token in the banner, got ${live.length} and ${test.length}:\n${server.stdout()}`,
    );
  }
  return { Customer: live[0]!, Testing: test[0]! };
}

/** GET /api/user with a JSON body: get or create the group `userGroupId`. */
export function getOrCreate(server: ServerProcess, token: string, body: Record<string, unknown>): Promise<ApiResponse> {
  return server.request({ method: 'GET', path: '/api/user', token, body });
}

/** The JSON a command printed on stdout; throws, showing its stderr, unless it exited 0. */
export function jsonOutput<T = unknown>(result: RunResult): T {
  if (result.code !== 0)
    throw new Error(`expected exit 0, got ${result.code}\nstderr:\n${result.stderr}\nstdout:\n${result.stdout}`);
  return JSON.parse(result.stdout) as T;
}

/** Writes a JSON Lines file: each value as one line of JSON, except strings, written as they are (for malformed lines). */
export function writeJsonLines(path: string, lines: readonly unknown[]): void {
  writeFileSync(path, lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n');
}

/** Every non-blank line of a JSON Lines file, parsed. */
export function readJsonLines<T = Record<string, unknown>>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

/** How many rows the audit_events table of a sandbox's SQLite database holds, read directly. */
export function auditEventCount(box: Sandbox): number {
  const db = new Database(box.databasePath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT count(*) FROM audit_events').pluck().get() as number;
  } finally {
    db.close();
  }
}

/** `ugs schemas create --name <name>`; the new schema's id. */
export async function createSchema(box: Sandbox, name: string): Promise<number> {
  return jsonOutput<{ id: number }>(await box.ugs('schemas', 'create', '--name', name, '--json')).id;
}

/** `ugs data-sources create`; the new data source's id. */
export async function createDataSource(
  box: Sandbox,
  source: { providedId: string; schemaId: number; environment: 'Customer' | 'Testing'; name?: string },
): Promise<number> {
  const created = await box.ugs(
    'data-sources',
    'create',
    '--json',
    '--provided-id',
    source.providedId,
    '--name',
    source.name ?? source.providedId,
    '--schema-id',
    String(source.schemaId),
    '--environment',
    source.environment,
  );
  return jsonOutput<{ id: number }>(created).id;
}

/** A failure as a user should see it: a non-zero exit, nothing on stdout, `message` on stderr and no stack trace. */
export function expectCleanFailure(result: RunResult, message: RegExp): void {
  expect({ ...result, code: result.code === 0 ? 'exit 0' : 'non-zero' }).toMatchObject({
    code: 'non-zero',
    stdout: '',
    stderr: expect.stringMatching(message),
  });
  expect(result.stderr).not.toMatch(/^\s+at /m);
}

export type Environment = 'Customer' | 'Testing';

/** One line of `ugs groups export`. */
export interface ExportedGroup {
  team_id: number;
  provided_id: string;
  name: string;
  properties: Record<string, unknown> | null;
  /** Schema id → data source provided id. */
  mapping: Record<string, string>;
  api_environment_tag: Environment;
  created_at: string;
  updated_at: string;
  token?: string;
}

/** What `ugs groups import --json` prints at the end. */
export interface ImportSummary {
  created: number;
  updated: number;
  unchanged: number;
  rejected: Array<{ line: number; reason: string }>;
}

let transferFiles = 0;
const transferFile = (box: Sandbox, kind: 'import' | 'export') => join(box.dir, `${kind}-${++transferFiles}.jsonl`);

/** `ugs groups import <path> --json <flags>`; the summary (throws unless it exits 0). */
export async function importFile(box: Sandbox, path: string, ...flags: string[]): Promise<ImportSummary> {
  return jsonOutput<ImportSummary>(await box.ugs('groups', 'import', path, '--json', ...flags));
}

/** Writes `lines` (see writeJsonLines) to a new file in the sandbox and imports it like importFile. */
export async function importGroups(
  box: Sandbox,
  lines: readonly unknown[],
  ...flags: string[]
): Promise<ImportSummary> {
  const path = transferFile(box, 'import');
  writeJsonLines(path, lines);
  return importFile(box, path, ...flags);
}

/** `ugs groups export --output <new file in the sandbox> <flags>`: the file, its text and its groups. */
export async function exportGroups(
  box: Sandbox,
  ...flags: string[]
): Promise<{ path: string; text: string; groups: ExportedGroup[] }> {
  const path = transferFile(box, 'export');
  const result = await box.ugs('groups', 'export', '--output', path, ...flags);
  expect(result, result.stderr).toMatchObject({ code: 0, stdout: '' });
  const text = readFileSync(path, 'utf8');
  const groups = readJsonLines<ExportedGroup>(path);
  expect(result.stderr).toBe(`exported ${groups.length} user groups\n`);
  return { path, text, groups };
}
