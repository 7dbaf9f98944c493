/*
 * A raw, read-only look at a test database of either engine, on a connection of its own: what the
 * tests check the stored state with, without going through the store or the API. Values come out
 * alike on both engines, so two reads of an unchanged database compare equal: integers (bigint
 * included) as numbers, timestamps as ISO strings, JSON columns as the text stored.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import type { TestDatabase, TestEngine } from './test-database.js';

export type Row = Record<string, unknown>;

export interface RawDatabaseReader {
  readonly engine: TestEngine;
  /**
   * Every row of every table, by table name, each table in primary-key order. The identity counters
   * are part of it, so an id that was used up shows even when its row is gone: SQLite's
   * sqlite_sequence is a table already; on PostgreSQL `pg_sequences` lists each sequence of the
   * schema with its last_value.
   */
  readAll(): Promise<Record<string, Row[]>>;
  /** `SELECT count(*) FROM <from>`: a table, optionally with a WHERE clause; `?` placeholders. */
  count(from: string, ...params: unknown[]): Promise<number>;
  /** Runs one SELECT; `?` placeholders on both engines. */
  select<R extends Row = Row>(sql: string, ...params: unknown[]): Promise<R[]>;
  close(): Promise<void>;
}

/** The PostgreSQL schema a test database lives in: the search_path its URL sets. */
export function postgresSchemaOf(db: TestDatabase): string {
  const options = new URL(db.url).searchParams.get('options') ?? '';
  const schema = /search_path=([A-Za-z_][A-Za-z0-9_]*)/.exec(options)?.[1];
  if (db.engine !== 'postgres' || !schema)
    throw new Error(`not a PostgreSQL test database with a search_path: ${db.url}`);
  return schema;
}

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;

/** ORDER BY the primary key's columns, or every column of a table without one. */
function orderBy(primaryKey: string[], columnCount: number): string {
  const keys =
    primaryKey.length > 0
      ? primaryKey.map(quote)
      : Array.from({ length: columnCount }, (_, index) => String(index + 1));
  return keys.length > 0 ? ` ORDER BY ${keys.join(', ')}` : '';
}

/** A read-only reader of the database; close it when done. */
export async function openDatabaseReader(db: TestDatabase): Promise<RawDatabaseReader> {
  return db.engine === 'sqlite' ? openSqliteReader(db) : openPostgresReader(db);
}

function openSqliteReader(db: TestDatabase): RawDatabaseReader {
  if (!db.sqlitePath) throw new Error(`a SQLite test database without a file: ${db.url}`);
  // Read-only on a WAL database: every statement sees what the app has committed by then.
  const connection = new Database(db.sqlitePath, { readonly: true, fileMustExist: true });
  const select = async <R extends Row>(sql: string, ...params: unknown[]) =>
    connection.prepare(sql).all(...params) as R[];
  let plan: Array<{ table: string; sql: string }> | undefined;
  const planOf = () =>
    (plan ??= (
      connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[]
    ).map((table) => {
      const columns = connection.pragma(`table_info(${quote(table)})`) as Array<{ name: string; pk: number }>;
      const primaryKey = columns
        .filter((column) => column.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((column) => column.name);
      return { table, sql: `SELECT * FROM ${quote(table)}${orderBy(primaryKey, columns.length)}` };
    }));
  return {
    engine: 'sqlite',
    async readAll() {
      return Object.fromEntries(planOf().map(({ table, sql }) => [table, connection.prepare(sql).all() as Row[]]));
    },
    async count(from, ...params) {
      return (connection.prepare(`SELECT count(*) AS n FROM ${from}`).get(...params) as { n: number }).n;
    },
    select,
    async close() {
      connection.close();
    },
  };
}

const { builtins } = pg.types;
const toIsoString = (parse: (value: string) => unknown) => (value: string) => (parse(value) as Date).toISOString();
const asText = (value: string) => value;
const parseTimestamptz = toIsoString(pg.types.getTypeParser(builtins.TIMESTAMPTZ, 'text'));
const parseTimestamp = toIsoString(pg.types.getTypeParser(builtins.TIMESTAMP, 'text'));

/** Text-format parsers that give what better-sqlite3 gives for the same column of the SQLite schema. */
const SQLITE_LIKE_TYPES: Record<number, (value: string) => unknown> = {
  [builtins.INT8]: (value) => {
    const number = Number(value);
    if (!Number.isSafeInteger(number)) throw new Error(`bigint ${value} is beyond what a test reads as a number`);
    return number;
  },
  [builtins.TIMESTAMPTZ]: parseTimestamptz,
  [builtins.TIMESTAMP]: parseTimestamp,
  [builtins.JSON]: asText,
  [builtins.JSONB]: asText,
};

/** `?` placeholders, as the SQLite side takes them, numbered for PostgreSQL. */
function numberPlaceholders(sql: string): string {
  let index = 0;
  return sql.replace(/\?/g, () => `$${(index += 1)}`);
}

async function openPostgresReader(db: TestDatabase): Promise<RawDatabaseReader> {
  const client = new pg.Client({
    // The URL's search_path selects the test's schema, exactly as it does for the app.
    connectionString: db.url,
    connectionTimeoutMillis: 5000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        (format ?? 'text') === 'text' && SQLITE_LIKE_TYPES[oid]
          ? SQLITE_LIKE_TYPES[oid]
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  await client.connect();
  // The reader only reads; a statement that tries anything else fails.
  await client.query('SET default_transaction_read_only = on');
  const select = async <R extends Row>(sql: string, ...params: unknown[]) =>
    (await client.query<R>(numberPlaceholders(sql), params)).rows;

  let plan: Promise<Array<{ table: string; sql: string }>> | undefined;
  const planOf = () =>
    (plan ??= (async () => {
      const tables = await select<{ name: string; columns: number; primary_key: string[] }>(
        `SELECT c.relname::text AS name,
           (SELECT count(*) FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns,
           coalesce((SELECT array_agg(a.attname::text ORDER BY array_position(i.indkey::int2[], a.attnum))
             FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
             WHERE i.indrelid = c.oid AND i.indisprimary), '{}'::text[]) AS primary_key
         FROM pg_class c
         WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
         ORDER BY c.relname`,
      );
      return tables.map(({ name, columns, primary_key: primaryKey }) => ({
        table: name,
        sql: `SELECT * FROM ${quote(name)}${orderBy(primaryKey, columns)}`,
      }));
    })());

  return {
    engine: 'postgres',
    async readAll() {
      const all: Record<string, Row[]> = {};
      for (const { table, sql } of await planOf()) all[table] = await select(sql);
      // Sequences are not transactional: a value handed out stays used, even by a rolled-back insert.
      // Except idempotency_keys': its ids are internal row handles (for key rotation, never shown),
      // and a claim that finds the key taken draws one all the same (ON CONFLICT evaluates the
      // insert's defaults first), though it changes nothing.
      all.pg_sequences = await select(`SELECT sequencename, last_value FROM pg_sequences
        WHERE schemaname = current_schema() AND sequencename <> 'idempotency_keys_id_seq' ORDER BY sequencename`);
      return all;
    },
    async count(from, ...params) {
      const [row] = await select<{ n: number }>(`SELECT count(*) AS n FROM ${from}`, ...params);
      return row!.n;
    },
    select,
    async close() {
      await client.end();
    },
  };
}
