import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Engine } from './options.js';
import { backendCpuCounter } from './postgres-backends.js';
import type { DatabaseCpuCounter } from './wrk.js';
import { withPostgresClient } from '../test/support/test-database.js';

/** What the first load of a kept database created through the services, for every later run. */
export interface KeptSetup {
  apiToken: string;
  adminToken: string;
  /** The schema and data source every seeded group is mapped to. */
  schemaId: number;
  dataSourceId: number;
  dataSourceProvidedId: string;
  /** Groups per batch of the load, the same in every run that continues it. */
  seedBatch: number;
}

/**
 * A kept database's side file (bench/.data/scale/…json): what its data cannot give back. Tokens are
 * stored hashed and encrypted, so the groups' tokens are derived from `tokenSeed` (seed.ts) and a
 * later run regenerates its sample's; PostgreSQL's encryption key (SQLite's is its `<db>.key` file).
 */
interface KeptState {
  tokenSeed: string;
  encryptionKey?: string;
  /** The last of the 30 days the seeded usage rows fall in: the day before the first load began. */
  usageUntil: string;
  setup?: KeptSetup;
}

export interface BenchDatabase {
  engine: Engine;
  /** What `ugs serve --database` takes. */
  url: string;
  /** UGS_ENCRYPTION_KEY for the seeder and the server alike; undefined on SQLite (its key file `<db>.key`). */
  encryptionKey: string | undefined;
  /** Where it lives, for the report (never a password). */
  describe: string;
  /**
   * Brings the planner statistics up to date after the bulk seed, as autovacuum would within a minute
   * or so in production; without it PostgreSQL plans the first minute on an empty table's statistics.
   */
  analyze(): Promise<void>;
  /** Counts the database's own CPU during a measured run (postgres-backends.ts); undefined on SQLite, which runs inside the service. */
  databaseCpu?: DatabaseCpuCounter;
  /** Removes it, unless it is kept. */
  drop(): Promise<void>;
  /** Kept between runs (`--keep`, or a size above KEPT_ABOVE): its load resumes, drop() leaves it. */
  kept: boolean;
  /** What the groups' tokens derive from (seed.ts groupToken): random for a database of one run, kept otherwise. */
  tokenSeed: string;
  /** The last day of the seeded usage rows (YYYY-MM-DD), the 29 before it the first. */
  usageUntil: string;
  /** The tokens and mapping of a kept database's first load; undefined on a new one. */
  setup: KeptSetup | undefined;
  /** Records them beside a kept database (nothing otherwise). */
  saveSetup(setup: KeptSetup): void;
  /**
   * Usage rows (three days in the 30 ending usageUntil) for the first `groups` groups in team_id
   * order, one statement per 100 000 groups from the highest team_id already given some: a load cut
   * short continues where it stopped. Returns the groups given rows by this call.
   */
  seedUsage(groups: number, log: (message: string) => void): Promise<number>;
}

const day = (date: Date) => date.toISOString().slice(0, 10);

function newState(engine: Engine): KeptState {
  return {
    tokenSeed: randomBytes(32).toString('hex'),
    ...(engine === 'postgres' ? { encryptionKey: randomBytes(32).toString('base64') } : {}),
    usageUntil: day(new Date(Date.now() - 86_400_000)),
  };
}

/** What a kept database's side file holds, if there is one. */
function readKept(file: string): KeptState | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as KeptState) : undefined;
}

/** Secrets inside: readable by its owner alone. */
const writeKept = (file: string, state: KeptState) =>
  writeFileSync(file, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });

/** The side file's state, or a new one written there when the database must start over (`reset`). */
function keptState(file: string, engine: Engine, reset: boolean): KeptState {
  const kept = reset ? undefined : readKept(file);
  if (kept) return kept;
  const state = newState(engine);
  writeKept(file, state);
  return state;
}

function saver(file: string | undefined, state: KeptState): (setup: KeptSetup) => void {
  return (setup) => {
    state.setup = setup;
    if (file) writeKept(file, state);
  };
}

/** Groups of usage rows per statement. */
const USAGE_CHUNK = 100_000;

/** One engine's way to run the usage load's statements: `$n` or `@pn` parameters, the first row's first column back. */
interface UsageSql {
  param: (n: number) => string;
  /** The date `back` days before the date parameter `until`. */
  daysBefore: (until: string, back: string) => string;
  query: (sql: string, params: unknown[]) => Promise<number | null>;
}

/**
 * The usage load of both engines. Each group gets three days in the 30 ending `until` (its team_id
 * picks which) and counts spread by team_id, so the busiest groups are scattered over the table.
 * Resumes after the highest team_id with rows on those days (each statement is one transaction), up
 * to the team_id of the `groups`-th group.
 */
async function loadUsage(
  { param, daysBefore, query }: UsageSql,
  until: string,
  groups: number,
  log: (message: string) => void,
): Promise<number> {
  const insert = `INSERT INTO group_usage (team_id, day, workspace_id, environment, embed_tokens_minted, verifications, reads)
    SELECT g.team_id, ${daysBefore(param(3), '(g.team_id % 10 + d.back)')}, g.workspace_id, g.environment,
      (g.team_id * 31) % 10, 1 + (g.team_id * 7919) % 1000, (g.team_id * 104729) % 500
    FROM user_groups g CROSS JOIN (SELECT 0 AS back UNION ALL SELECT 10 UNION ALL SELECT 20) d
    WHERE g.team_id > ${param(1)} AND g.team_id <= ${param(2)}
    ON CONFLICT DO NOTHING`;
  const nth = `SELECT team_id FROM user_groups WHERE team_id > ${param(1)} ORDER BY team_id LIMIT 1 OFFSET ${param(2)}`;
  const lastTeamId =
    (await query(nth, [0, groups - 1])) ?? (await query('SELECT max(team_id) FROM user_groups', [])) ?? 0;
  // Only the seeded days: what the service counts when the bench loads it falls on the first load's day or later.
  let after = (await query(`SELECT coalesce(max(team_id), 0) FROM group_usage WHERE day <= ${param(1)}`, [until])) ?? 0;
  let given = 0;
  while (after < lastTeamId) {
    const end = Math.min((await query(nth, [after, USAGE_CHUNK - 1])) ?? lastTeamId, lastTeamId);
    await query(insert, [after, end, until]);
    const count = `SELECT count(*) FROM user_groups WHERE team_id > ${param(1)} AND team_id <= ${param(2)}`;
    given += (await query(count, [after, end])) ?? 0;
    after = end;
    log(`  usage rows: the groups through team_id ${end} of ${lastTeamId}`);
  }
  return given;
}

/**
 * A SQLite file under `dir` (on the repo's disk, not a tmpfs: commits must really reach the disk):
 * fresh, or with `keep` the one a previous run left there (with its side file), unless `fresh`.
 */
export function sqliteDatabase(dir: string, size: number, { keep = false, fresh = false } = {}): BenchDatabase {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `bench-${size}.db`);
  const files = [path, `${path}-wal`, `${path}-shm`, `${path}-journal`, `${path}.key`];
  const sideFile = keep ? join(dir, `bench-${size}.json`) : undefined;
  // Without its side file (or its setup) a kept file's tokens cannot be found again: start it over.
  const reset = !sideFile || fresh || !existsSync(path) || readKept(sideFile)?.setup === undefined;
  if (reset) for (const file of files) rmSync(file, { force: true });
  const state = sideFile ? keptState(sideFile, 'sqlite', reset) : newState('sqlite');
  return {
    engine: 'sqlite',
    url: `sqlite:${path}`,
    encryptionKey: undefined,
    describe: keep ? `${path} (kept)` : path,
    analyze: async () => undefined,
    drop: async () => {
      if (!keep) for (const file of files) rmSync(file, { force: true });
    },
    kept: keep,
    tokenSeed: state.tokenSeed,
    usageUntil: state.usageUntil,
    setup: state.setup,
    saveSetup: saver(sideFile, state),
    seedUsage: async (groups, log) => {
      const db = new Database(path);
      try {
        db.pragma('busy_timeout = 10000');
        return await loadUsage(
          {
            param: (n) => `@p${n}`,
            daysBefore: (until, back) => `date(${until}, '-' || ${back} || ' days')`,
            query: async (sql, params) => {
              const statement = db.prepare(sql);
              const named = Object.fromEntries(params.map((value, index) => [`p${index + 1}`, value]));
              if (!statement.reader) {
                statement.run(named);
                return null;
              }
              const row = statement.raw().get(named) as unknown[] | undefined;
              return row === undefined || row[0] === null ? null : Number(row[0]);
            },
          },
          state.usageUntil,
          groups,
          log,
        );
      } finally {
        db.close();
      }
    },
  };
}

export function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

export async function postgresServerVersion(baseUrl: string): Promise<string> {
  return withPostgresClient(
    async (client) => (await client.query<{ v: string }>('SHOW server_version')).rows[0]?.v ?? 'unknown',
    baseUrl,
  );
}

/**
 * Schema `bench_<size>` of the PostgreSQL database at `baseUrl`, made afresh (dropped first if a
 * previous run left it) and selected through the URL's `options=-c search_path=…`, so the service
 * and the seeder never see any other schema's tables. drop() removes it. With `keep`, schema
 * `bench_scale_<size>`, kept between runs with its side file under `sideDir` (its encryption key and
 * token seed) and made afresh only when `fresh`, or when either is missing.
 */
export async function postgresDatabase(
  baseUrl: string,
  size: number,
  { keep = false, fresh = false, sideDir = '' } = {},
): Promise<BenchDatabase> {
  const schema = keep ? `bench_scale_${size}` : `bench_${size}`;
  const url = new URL(baseUrl);
  let sideFile: string | undefined;
  if (keep) {
    mkdirSync(sideDir, { recursive: true });
    sideFile = join(sideDir, `postgres-${url.hostname}-${url.port || 5432}-${url.pathname.slice(1)}-${size}.json`);
  }
  const reset = await withPostgresClient(async (client) => {
    const present = (await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount === 1;
    const reset = !sideFile || fresh || !present || readKept(sideFile)?.setup === undefined;
    if (reset) {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.query(`CREATE SCHEMA ${schema}`);
    }
    return reset;
  }, baseUrl);
  const state = sideFile ? keptState(sideFile, 'postgres', reset) : newState('postgres');
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    engine: 'postgres',
    url: url.toString(),
    encryptionKey: state.encryptionKey,
    describe: `${redact(baseUrl)} schema ${schema}${keep ? ' (kept)' : ''}`,
    // Table by table: a bare ANALYZE would walk every schema of the database, other people's included.
    analyze: () =>
      withPostgresClient(async (client) => {
        const { rows } = await client.query<{ tablename: string }>(
          'SELECT tablename FROM pg_tables WHERE schemaname = $1',
          [schema],
        );
        for (const { tablename } of rows) await client.query(`ANALYZE ${schema}."${tablename}"`);
      }, baseUrl),
    databaseCpu: () => backendCpuCounter(baseUrl),
    drop: async () => {
      if (keep) return;
      await withPostgresClient(
        async (client) => void (await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)),
        baseUrl,
      );
    },
    kept: keep,
    tokenSeed: state.tokenSeed,
    usageUntil: state.usageUntil,
    setup: state.setup,
    saveSetup: saver(sideFile, state),
    seedUsage: (groups, log) =>
      withPostgresClient(
        (client) =>
          loadUsage(
            {
              param: (n) => `$${n}`,
              daysBefore: (until, back) => `${until}::date - ${back}::int`,
              query: async (sql, params) => {
                const { rows } = await client.query<unknown[]>({ text: sql, values: params, rowMode: 'array' });
                const value = rows[0]?.[0];
                return value === undefined || value === null ? null : Number(value);
              },
            },
            state.usageUntil,
            groups,
            log,
          ),
        url.toString(),
      ),
  };
}

/** `ugs serve`'s flags for the bench, but for the port. */
export function serveFlags(db: BenchDatabase): string[] {
  return [
    '--host',
    '127.0.0.1',
    '--database',
    db.url,
    '--log-level',
    'warn',
    // On, as in production, but far above what the load generator can send: the limiter's cost is
    // measured, and no request is refused.
    '--rate-limit',
    '1000000/s',
    '--workers',
    '1',
  ];
}
