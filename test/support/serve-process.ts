// `ugs serve` as a real process (bin/ugs.js → dist/, so build first: `npm test` does) on a test
// database of either engine, for tests that need several processes or a process's whole life.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { send } from './http-client.js';
import { withPostgresClient, type TestDatabase } from './test-database.js';
import { freePort } from './free-port.js';
import { sleep } from './wait-for.js';

export interface ServeProcess {
  baseUrl: string;
  pid: number;
  /** Everything the process (and, with --workers, its workers) wrote so far. */
  stdout(): string;
  stderr(): string;
  /** The first-start admin tokens from the banner on stdout; throws when this process printed none. */
  adminTokens(): { Customer: string; Testing: string };
  /** Sends `signal` (SIGTERM by default), waits for the exit and returns the exit code (null: killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const UGS_BIN = join(REPO, 'bin', 'ugs.js');
const START_TIMEOUT_MS = 20_000;
const POLL_MS = 50;
/** How long tokens may sit in the database with no banner anywhere before we accept that none is coming. */
const FOREIGN_TOKENS_GRACE_MS = 2_000;
/** stopAllServeProcesses: SIGTERM first; SIGKILL a process still running after this long. */
const STOP_ALL_GRACE_MS = 15_000;

const LIVE_SECRET = /ugs_live_[0-9a-f]{64}/g;
const TEST_SECRET = /ugs_test_[0-9a-f]{64}/g;
/** The banner from its first ruler to its last: written in one piece, but a pipe may deliver it in two. */
const WHOLE_BANNER = /={78}\n User Group Service: first start\.[\s\S]*?\n={78}\n/;

interface Started {
  process: ServeProcess;
  /** The database it opens; `dir` identifies the test database also when reached through a proxy. */
  db: TestDatabase;
  exited: Promise<number | null>;
  running(): boolean;
}

const started = new Set<Started>();

function serveEnv(db: TestDatabase, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('UGS_')));
  return {
    ...inherited,
    UGS_RATE_LIMIT: 'off',
    UGS_LOG_LEVEL: 'warn',
    ...(db.encryptionKey === undefined ? {} : { UGS_ENCRYPTION_KEY: db.encryptionKey }),
    ...extra,
  };
}

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

function bannerTokens(stdout: string): { Customer: string; Testing: string } | undefined {
  const live = [...new Set(stdout.match(LIVE_SECRET) ?? [])];
  const test = [...new Set(stdout.match(TEST_SECRET) ?? [])];
  return live.length === 1 && test.length === 1 ? { Customer: live[0]!, Testing: test[0]! } : undefined;
}

function spawnServe(
  db: TestDatabase,
  opened: TestDatabase,
  port: number,
  options: { args?: string[]; env?: Record<string, string> },
): Started {
  const child = spawn(
    process.execPath,
    [UGS_BIN, 'serve', '--port', String(port), '--database', db.url, ...(options.args ?? [])],
    {
      cwd: REPO,
      env: serveEnv(db, options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  if (child.pid === undefined) throw new Error(`could not start ${process.execPath} ${UGS_BIN} serve`);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  // 'close', not 'exit': by then the pipes are drained, so stdout() holds everything the process wrote.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const running = () => child.exitCode === null && child.signalCode === null;
  const serve: ServeProcess = {
    baseUrl: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stdout: () => stdout,
    stderr: () => stderr,
    adminTokens() {
      const tokens = bannerTokens(stdout);
      if (!tokens) {
        throw new Error(
          `ugs serve (pid ${child.pid}) printed no first-start banner with one ugs_live_ and one ugs_test_ token; stdout:\n${stdout || '(empty)'}`,
        );
      }
      return tokens;
    },
    async stop(signal = 'SIGTERM') {
      if (running()) child.kill(signal);
      return exited;
    },
  };
  const entry: Started = { process: serve, db: opened, exited, running };
  started.add(entry);
  void exited.then(() => started.delete(entry));
  return entry;
}

const outputOf = (entry: Started) => `stdout:\n${entry.process.stdout()}\nstderr:\n${entry.process.stderr()}`;

/** Resolves once GET /healthz answers 200; throws when the process exits first or the time is up. */
async function waitUntilHealthy(entry: Started, deadline: number): Promise<void> {
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
      throw new Error(`ugs serve did not answer /healthz within ${START_TIMEOUT_MS} ms\n${outputOf(entry)}`);
    await sleep(POLL_MS);
  }
}

/**
 * /healthz answers as soon as the server listens, but the first-start tokens are created (and the
 * banner printed) after that: on a database without API tokens, wait until the banner is out, in
 * this process or in another one this module started on the same database at the same time, so
 * that `adminTokens()` never races it.
 */
async function waitForBanner(entry: Started, deadline: number): Promise<void> {
  let tokensSeenAt: number | undefined;
  for (;;) {
    const printed = [...started].some(
      (other) => other.db.dir === entry.db.dir && WHOLE_BANNER.test(other.process.stdout()),
    );
    if (printed || WHOLE_BANNER.test(entry.process.stdout())) return;
    if (!entry.running()) throw new Error(`ugs serve exited during its first start\n${outputOf(entry)}`);
    // Tokens made by something other than a `ugs serve` of ours (say `ugs tokens create`): no banner comes.
    if (tokensSeenAt === undefined && (await apiTokenCount(entry.db).catch(() => 0)) > 0) tokensSeenAt = Date.now();
    if (tokensSeenAt !== undefined && Date.now() - tokensSeenAt > FOREIGN_TOKENS_GRACE_MS) return;
    if (Date.now() > deadline)
      throw new Error(
        `ugs serve answered /healthz but printed no first-start banner within ${START_TIMEOUT_MS} ms\n${outputOf(entry)}`,
      );
    await sleep(POLL_MS);
  }
}

/**
 * Spawns `ugs serve --port <free port> --database <db.url> ...args` and resolves once it answers
 * /healthz (and, on a database that had no API token yet, once the first-start banner is out). Fails
 * with the process's output when it exits first or does not come up within 20 s. The environment is
 * this process's without any UGS_* variable, plus UGS_RATE_LIMIT=off, UGS_LOG_LEVEL=warn, the
 * database's UGS_ENCRYPTION_KEY and `options.env`.
 */
export async function startServeProcess(
  db: TestDatabase,
  options: { args?: string[]; env?: Record<string, string> } = {},
): Promise<ServeProcess> {
  if (!existsSync(join(REPO, 'dist', 'cli', 'main.js'))) {
    throw new Error(
      'dist/ is missing: run `npm run build` (or `npm test`, which builds) before tests that start `ugs serve`.',
    );
  }
  const opened = effectiveDatabase(db, options.args ?? []);
  for (let attempt = 1; ; attempt++) {
    const hadTokens = (await apiTokenCount(opened)) > 0;
    const entry = spawnServe(db, opened, await freePort(), options);
    const deadline = Date.now() + START_TIMEOUT_MS;
    try {
      await waitUntilHealthy(entry, deadline);
      if (!hadTokens) await waitForBanner(entry, deadline);
      return entry.process;
    } catch (error) {
      if (entry.running()) await entry.process.stop('SIGKILL');
      // The free port was taken between the probe and the listen: try another one.
      if (attempt < 3 && /EADDRINUSE/.test(entry.process.stderr())) continue;
      throw error;
    }
  }
}

/** Stops every process startServeProcess started that is still running: SIGTERM, then SIGKILL after 15 s. */
export async function stopAllServeProcesses(): Promise<void> {
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
