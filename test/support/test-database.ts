import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export type TestEngine = 'sqlite' | 'postgres';

/** The engine the API suites run on: vitest's projects set UGS_TEST_ENGINE (see vitest.config.ts). */
export const TEST_ENGINE: TestEngine = process.env.UGS_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

/** Real PostgreSQL: UGS_TEST_POSTGRES_URL, or the local server CI starts. Unreachable means failing tests, never skipped ones. */
export const POSTGRES_URL = process.env.UGS_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  engine: TestEngine;
  /** What `--database` / UGS_DATABASE_URL takes. */
  url: string;
  /** UGS_ENCRYPTION_KEY for every process sharing this database (undefined: SQLite's key file). */
  encryptionKey: string | undefined;
  /** A scratch directory of the test's own (the SQLite file lives here). */
  dir: string;
  /** The SQLite file, for tests that read it raw. */
  sqlitePath: string | undefined;
  drop(): Promise<void>;
}

export async function withPostgresClient<R>(work: (client: pg.Client) => Promise<R>, url = POSTGRES_URL): Promise<R> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * An empty database of the given engine. On PostgreSQL each one is a fresh schema, selected by the
 * connection URL's `options=-c search_path=…`, so tests never see each other's rows.
 */
export async function createTestDatabase(engine: TestEngine = TEST_ENGINE): Promise<TestDatabase> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'ugs-test-'));
    const sqlitePath = join(dir, 'ugs.db');
    return {
      engine,
      url: `sqlite:${sqlitePath}`,
      encryptionKey: undefined,
      dir,
      sqlitePath,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = `t_${randomBytes(8).toString('hex')}`;
  await withPostgresClient((client) => client.query(`CREATE SCHEMA ${schema}`));
  return postgresTestDatabase(schemaUrl(schema), () =>
    withPostgresClient((client) => client.query(`DROP SCHEMA ${schema} CASCADE`)).then(() => undefined),
  );
}

/** The PostgreSQL schema `url` selects as a test's database, with a key and a scratch directory of its own. */
export function postgresTestDatabase(url: string, dropSchema: () => Promise<void>): TestDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'ugs-test-'));
  return {
    engine: 'postgres',
    url,
    encryptionKey: randomBytes(32).toString('base64'),
    dir,
    sqlitePath: undefined,
    drop: async () => {
      await dropSchema();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The test database's URL with the connection's search_path set to `schema`. */
export function schemaUrl(schema: string, baseUrl = POSTGRES_URL): string {
  const url = new URL(baseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** The same database reached through another host and port (e.g. a test's TCP proxy). */
export function viaPort(url: string, port: number): string {
  const rerouted = new URL(url);
  rerouted.hostname = '127.0.0.1';
  rerouted.port = String(port);
  return rerouted.toString();
}
