// `ugs serve` as a real process (bin/ugs.js → dist/, so build first: `npm test` does), for tests that
// need several processes or a process's whole life. One launcher, two ways in: startServeProcess on a
// test database of either engine, startServe (and spawnServe) with the arguments as a user types them.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import Database from 'better-sqlite3';
import { send, type ApiRequest, type ApiResponse } from './http-client.js';
import { withPostgresClient, type TestDatabase } from './test-database.js';
import { freePort } from './free-port.js';
import { REPO, requireBuild, UGS_BIN, ugsEnv } from './ugs-command.js';
import { sleep, waitFor } from './wait-for.js';

export interface ServeProcess {
  baseUrl: string;
  port: number;
  pid: number;
  process: ChildProcess;
  /** Everything the process (and, with --workers, its workers) wrote so far. */
  stdout(): string;
  stderr(): string;
  /** The first-start admin tokens, from the file this process's log names; throws when it made none. */
  adminTokens(): { Customer: string; Testing: string };
  /** The text of the first-start tokens file this process's log names; undefined when it made none. */
  firstStartText(): string | undefined;
  /** Resolves with the exit code once the process has ended (see ServeOptions.exitedOn). */
  exited: Promise<number | null>;
  /** Sends `signal` (SIGTERM by default), waits for the exit and returns the exit code (null: killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  request(req: ApiRequest): Promise<ApiResponse>;
}

/** startServe and spawnServe: where the launchers differ, and the process's surroundings. */
export interface ServeOptions {
  /** Added to this process's environment without any UGS_* variable, with UGS_RATE_LIMIT=off. */
  env?: Record<string, string>;
  /** The working directory (the repository unless given). */
  cwd?: string;
  /** Start the server as an operator would, with `npm start -- <args>`. */
  viaNpmStart?: boolean;
  /** The `ugs` program to run `serve` with (an installed release's); the repository's bin/ugs.js unless given. */
  ugs?: string;
  /** How long the server may take to answer /healthz (15 s unless given). */
  startTimeoutMs?: number;
}

/** How a launch differs between startServeProcess and startServe. */
interface LaunchOptions extends ServeOptions {
  /** `argument`: `--port <port>` before `args`; `environment`: UGS_PORT, which `args` may override. */
  portIn: 'argument' | 'environment';
  /** UGS_LOG_LEVEL, when set (the server's default otherwise). */
  logLevel?: string;
  /** `close` waits for the pipes to drain too, so that stdout() holds everything the process wrote. */
  exitedOn: 'exit' | 'close';
  /** The database the process opens, when known: startServeProcess waits for its first-start tokens file. */
  opened?: TestDatabase;
}

const START_TIMEOUT_MS = 20_000;
const SERVE_START_TIMEOUT_MS = 15_000;
const POLL_MS = 50;
/** How long tokens may sit in the database with no first-start tokens file anywhere before we accept that none is coming. */
const FOREIGN_TOKENS_GRACE_MS = 2_000;
/** stopAllServeProcesses('terminate'): SIGTERM first; SIGKILL a process still running after this long. */
const STOP_ALL_GRACE_MS = 15_000;

export const LIVE_TOKEN = /ugs_live_[0-9a-f]{64}/g;
export const TEST_TOKEN = /ugs_test_[0-9a-f]{64}/g;
/** The log message of a first start that wrote its admin tokens to a file (src/cli/first-start-tokens.ts). */
const TOKENS_WRITTEN = /^first start: one admin API token per environment was written to the file named here/;

/** The JSON log lines of some output (only whole lines count: a pipe may cut one). */
function logEntries(stdout: string): Array<{ msg?: unknown; file?: unknown }> {
  return stdout
    .split('\n')
    .slice(0, -1)
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as { msg?: unknown; file?: unknown }];
      } catch {
        return [];
      }
    });
}

/** The file the first-start log line in `stdout` names. */
export function firstStartTokensFileIn(stdout: string): string | undefined {
  const entry = logEntries(stdout).find(
    ({ msg, file }) => typeof msg === 'string' && TOKENS_WRITTEN.test(msg) && typeof file === 'string',
  );
  return entry?.file as string | undefined;
}

/** Whether a server (logging at info) has said what its start did about first-start tokens, whatever it was. */
const saidFirstStartOutcome = (stdout: string) =>
  logEntries(stdout).some(({ msg }) => typeof msg === 'string' && /first[- ]start/.test(msg));

/** The distinct API token secrets of one kind in some output. */
export function secretsIn(output: string, pattern: RegExp): string[] {
  return [...new Set(output.match(pattern) ?? [])];
}

interface Started {
  process: ServeProcess;
  /** The database it opens, when known; `dir` identifies the test database also when reached through a proxy. */
  db: TestDatabase | undefined;
  exited: Promise<number | null>;
  running(): boolean;
}

const started = new Set<Started>();

/** How many API tokens the database holds (0 before the first migration). */
async function apiTokenCount(db: TestDatabase): Promise<number> {
  if (db.engine === 'postgres') {
    return withPostgresClient(async (client) => {
      const table = await client.query<{ found: string | null }>("SELECT to_regclass('api_tokens')::text AS found");
      if (table.rows[0]?.found == null) return 0;
      return (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM api_tokens')).rows[0]?.n ?? 0;
    }, db.url);
  }
  if (db.sqlitePath === undefined || !existsSync(db.sqlitePath)) return 0;
  const reader = new Database(db.sqlitePath, { readonly: true, fileMustExist: true });
  try {
    const table = reader.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'api_tokens'").get();
    return table === undefined ? 0 : (reader.prepare('SELECT count(*) FROM api_tokens').pluck().get() as number);
  } finally {
    reader.close();
  }
}

/**
 * The database the process really opens: `db`, unless `args` name another with --database (the
 * last one counts), whose API tokens are then the ones to look at.
 */
function effectiveDatabase(db: TestDatabase, args: readonly string[]): TestDatabase {
  let url = db.url;
  args.forEach((arg, index) => {
    if (arg === '--database' && args[index + 1] !== undefined) url = args[index + 1]!;
    else if (arg.startsWith('--database=')) url = arg.slice('--database='.length);
  });
  if (url === db.url) return db;
  if (url.startsWith('sqlite:'))
    return { ...db, engine: 'sqlite', url, sqlitePath: resolvePath(REPO, url.slice('sqlite:'.length)) };
  return { ...db, engine: 'postgres', url };
}

function tokensIn(stdout: string): { Customer: string; Testing: string } | undefined {
  const live = secretsIn(stdout, LIVE_TOKEN);
  const test = secretsIn(stdout, TEST_TOKEN);
  return live.length === 1 && test.length === 1 ? { Customer: live[0]!, Testing: test[0]! } : undefined;
}

/** Spawns `ugs serve` and returns at once, without waiting for it to listen. */
function launch(args: readonly string[], port: number, options: LaunchOptions): Started {
  const serveArgs = options.portIn === 'argument' ? ['--port', String(port), ...args] : [...args];
  const [file, commandArgs] = options.viaNpmStart
    ? ['npm', ['start', '--silent', '--', ...serveArgs]]
    : options.ugs !== undefined
      ? [options.ugs, ['serve', ...serveArgs]]
      : [process.execPath, [UGS_BIN, 'serve', ...serveArgs]];
  const child = spawn(file, commandArgs, {
    cwd: options.cwd ?? REPO,
    env: ugsEnv({
      ...(options.portIn === 'environment' ? { UGS_PORT: String(port) } : {}),
      ...(options.logLevel === undefined ? {} : { UGS_LOG_LEVEL: options.logLevel }),
      ...options.env,
    }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`could not start ${file} ${commandArgs.join(' ')}`);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once(options.exitedOn, (code) => resolve(code)));
  const running = () => child.exitCode === null && child.signalCode === null;
  const baseUrl = `http://127.0.0.1:${port}`;
  const serve: ServeProcess = {
    baseUrl,
    port,
    pid: child.pid,
    process: child,
    stdout: () => stdout,
    stderr: () => stderr,
    firstStartText() {
      const file = firstStartTokensFileIn(stdout);
      return file === undefined ? undefined : readFileSync(file, 'utf8');
    },
    adminTokens() {
      const tokens = tokensIn(serve.firstStartText() ?? '');
      if (!tokens) {
        throw new Error(
          `ugs serve (pid ${child.pid}) logged no first-start tokens file with one ugs_live_ and one ugs_test_ token; stdout:\n${stdout || '(empty)'}`,
        );
      }
      return tokens;
    },
    exited,
    async stop(signal = 'SIGTERM') {
      if (running()) child.kill(signal);
      return exited;
    },
    request: (req) => send(baseUrl, req),
  };
  const entry: Started = { process: serve, db: options.opened, exited, running };
  started.add(entry);
  void exited.then(() => started.delete(entry));
  return entry;
}

const outputOf = (entry: Started) => `stdout:\n${entry.process.stdout()}\nstderr:\n${entry.process.stderr()}`;

/** Resolves once GET /healthz answers 200; throws when the process exits first or `timeoutMs` is up. */
async function waitUntilHealthy(entry: Started, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!entry.running()) {
      const code = await entry.exited;
      throw new Error(
        `ugs serve exited (${code === null ? 'killed by a signal' : `code ${code}`}) before answering /healthz\n${outputOf(entry)}`,
      );
    }
    const status = await send(entry.process.baseUrl, { method: 'GET', path: '/healthz' }).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    if (Date.now() > deadline)
      throw new Error(`ugs serve did not answer /healthz within ${timeoutMs} ms\n${outputOf(entry)}`);
    await sleep(POLL_MS);
  }
}

/**
 * /healthz answers as soon as the server listens, but the first-start tokens are created (and the
 * file written) after that: on a database without API tokens, wait until the file is named, in
 * this process or in another one this module started on the same database at the same time, so
 * that `adminTokens()` never races it.
 */
async function waitForBanner(entry: Started, db: TestDatabase, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let tokensSeenAt: number | undefined;
  for (;;) {
    const made = (other: Started) => firstStartTokensFileIn(other.process.stdout()) !== undefined;
    if (made(entry) || [...started].some((other) => other.db?.dir === db.dir && made(other))) return;
    if (!entry.running()) throw new Error(`ugs serve exited during its first start\n${outputOf(entry)}`);
    // Tokens made by something other than a `ugs serve` of ours (say `ugs tokens create`): no file comes.
    if (tokensSeenAt === undefined && (await apiTokenCount(db).catch(() => 0)) > 0) tokensSeenAt = Date.now();
    if (tokensSeenAt !== undefined && Date.now() - tokensSeenAt > FOREIGN_TOKENS_GRACE_MS) return;
    if (Date.now() > deadline)
      throw new Error(
        `ugs serve answered /healthz but logged no first-start tokens file within ${timeoutMs} ms\n${outputOf(entry)}`,
      );
    await sleep(POLL_MS);
  }
}

/**
 * Launches on a free port and resolves once the server answers /healthz (and, when `options.opened`
 * is a database that had no API token yet, once the first-start tokens file is written). Kills the process and
 * fails with its output when it exits first or does not come up in time; retries on another port
 * when the free one was taken between the probe and the listen.
 */
async function start(args: readonly string[], options: LaunchOptions): Promise<ServeProcess> {
  if (options.ugs === undefined) requireBuild('tests that start `ugs serve`');
  const opened = options.opened;
  const timeoutMs = options.startTimeoutMs ?? START_TIMEOUT_MS;
  for (let attempt = 1; ; attempt++) {
    const hadTokens = opened === undefined || (await apiTokenCount(opened)) > 0;
    const startedAt = Date.now();
    const entry = launch(args, await freePort(), options);
    try {
      await waitUntilHealthy(entry, timeoutMs);
      if (!hadTokens) await waitForBanner(entry, opened, timeoutMs - (Date.now() - startedAt));
      // As a user starts it (log level info): once it has logged what it did about first-start tokens.
      if (options.portIn === 'environment')
        await waitFor('the log line about first-start tokens', timeoutMs, async () =>
          saidFirstStartOutcome(entry.process.stdout()) || !entry.running() ? true : undefined,
        );
      return entry.process;
    } catch (error) {
      if (entry.running()) await entry.process.stop('SIGKILL');
      if (attempt < 3 && /EADDRINUSE/.test(entry.process.stderr())) continue;
      throw error;
    }
  }
}

/**
 * Spawns `ugs serve --port <free port> --database <db.url> ...args` and resolves once it answers
 * /healthz (and, on a database that had no API token yet, once the first-start tokens file is written). Fails
 * with the process's output when it exits first or does not come up within 20 s. The environment is
 * this process's without any UGS_* variable, plus UGS_RATE_LIMIT=off, UGS_LOG_LEVEL=warn, the
 * database's UGS_ENCRYPTION_KEY and `options.env`. `exited` waits for the pipes to close.
 */
export function startServeProcess(
  db: TestDatabase,
  options: { args?: string[]; env?: Record<string, string>; ugs?: string; cwd?: string } = {},
): Promise<ServeProcess> {
  const args = options.args ?? [];
  return start(['--database', db.url, ...args], {
    ...(options.ugs === undefined ? {} : { ugs: options.ugs }),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    portIn: 'argument',
    logLevel: 'warn',
    exitedOn: 'close',
    opened: effectiveDatabase(db, args),
    env: {
      ...(db.encryptionKey === undefined ? {} : { UGS_ENCRYPTION_KEY: db.encryptionKey }),
      // PostgreSQL has no data folder: the first start writes its tokens where it is told to.
      ...(db.engine === 'postgres' ? { UGS_FIRST_START_TOKENS: join(db.dir, 'first-start-tokens') } : {}),
      ...options.env,
    },
  });
}

/** The CLI tests' launch: `args` as a user types them, the port in UGS_PORT, the log level and the first-start file left alone. */
const asTyped = (options: ServeOptions): LaunchOptions => ({
  startTimeoutMs: SERVE_START_TIMEOUT_MS,
  ...options,
  portIn: 'environment',
  exitedOn: 'exit',
});

/**
 * Starts `ugs serve <args>` with a free port in UGS_PORT (so `args` may override it) and resolves once
 * it answers /healthz and has logged what it did about first-start tokens; the server's own log level. Retries on
 * another port if the chosen one was taken in between. `exited` resolves on the process's exit.
 */
export function startServe(args: string[], options: ServeOptions = {}): Promise<ServeProcess> {
  return start(args, asTyped(options));
}

/** Spawns `ugs serve <args>` with UGS_PORT=`port` as startServe does, and returns at once, without waiting for it to listen. */
export function spawnServe(args: string[], port: number, options: ServeOptions = {}): ServeProcess {
  requireBuild('tests that start `ugs serve`');
  return launch(args, port, asTyped(options)).process;
}

/**
 * Stops every process this module started that is still running. `terminate` (the default): SIGTERM,
 * then SIGKILL after 15 s. `kill`: SIGKILL at once (the CLI tests' afterEach).
 */
export async function stopAllServeProcesses(how: 'terminate' | 'kill' = 'terminate'): Promise<void> {
  if (how === 'kill') {
    await Promise.all([...started].map((entry) => entry.process.stop('SIGKILL')));
    return;
  }
  await Promise.all(
    [...started].map(async (entry) => {
      const timer = setTimeout(() => {
        if (entry.running()) void entry.process.stop('SIGKILL');
      }, STOP_ALL_GRACE_MS);
      try {
        await entry.process.stop('SIGTERM');
      } finally {
        clearTimeout(timer);
      }
    }),
  );
}
