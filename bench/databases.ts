import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from './options.js';
import { withPostgresClient } from '../test/support/test-database.js';

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
  drop(): Promise<void>;
}

/** A fresh SQLite file under `dir` (on the repo's disk, not a tmpfs: commits must really reach the disk). */
export function sqliteDatabase(dir: string, size: number): BenchDatabase {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `bench-${size}.db`);
  const files = [path, `${path}-wal`, `${path}-shm`, `${path}-journal`, `${path}.key`];
  for (const file of files) rmSync(file, { force: true });
  return {
    engine: 'sqlite',
    url: `sqlite:${path}`,
    encryptionKey: undefined,
    describe: path,
    analyze: async () => undefined,
    drop: async () => {
      for (const file of files) rmSync(file, { force: true });
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
 * and the seeder never see any other schema's tables. drop() removes it.
 */
export async function postgresDatabase(baseUrl: string, size: number): Promise<BenchDatabase> {
  const schema = `bench_${size}`;
  await withPostgresClient(async (client) => {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.query(`CREATE SCHEMA ${schema}`);
  }, baseUrl);
  const url = new URL(baseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    engine: 'postgres',
    url: url.toString(),
    encryptionKey: randomBytes(32).toString('base64'),
    describe: `${redact(baseUrl)} schema ${schema}`,
    // Table by table: a bare ANALYZE would walk every schema of the database, other people's included.
    analyze: () =>
      withPostgresClient(async (client) => {
        const { rows } = await client.query<{ tablename: string }>(
          'SELECT tablename FROM pg_tables WHERE schemaname = $1',
          [schema],
        );
        for (const { tablename } of rows) await client.query(`ANALYZE ${schema}."${tablename}"`);
      }, baseUrl),
    drop: () =>
      withPostgresClient(
        async (client) => void (await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)),
        baseUrl,
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
