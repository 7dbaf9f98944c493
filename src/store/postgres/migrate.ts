import { setTimeout as sleep } from 'node:timers/promises';
import { MIGRATION_RECORD_TABLES, nextMigration, recordTableOf } from '../migration.js';
import type { Migration } from '../migration.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';
import { statement, statements } from './statements.js';

/** A PostgreSQL step; one that builds an index on a table that may be large does so without locking it. */
export interface PostgresMigration extends Migration {
  /**
   * Indexes built with CREATE INDEX CONCURRENTLY IF NOT EXISTS, in order, each outside any
   * transaction (PostgreSQL refuses one inside), so writes go on while they build. `sql` (empty for
   * none) then runs first, in the step's transaction, and the step is recorded once every index is
   * built: `sql` must be repeatable (IF NOT EXISTS), since a process that stops meanwhile runs it
   * again. Expand only.
   */
  concurrentIndexes?: readonly ConcurrentIndex[];
  /**
   * The extension whose operator class the indexes use, which `sql` creates when missing: the
   * builds find it in whichever schema it is installed, and a failure of `sql` says what to do.
   */
  extension?: string;
}

/** One index a step builds concurrently: its name and its CREATE INDEX CONCURRENTLY IF NOT EXISTS. */
export interface ConcurrentIndex {
  name: string;
  sql: string;
}

/**
 * Key of the transaction-scoped advisory lock that serialises migrations across every process on the
 * database. Any fixed bigint works as long as it never changes; this one spells "ugs-migr" in ASCII.
 * Releases before expand steps existed take the same lock the same way.
 */
const MIGRATION_LOCK_KEY = BigInt('0x7567732d6d696772').toString();
/** A session-level lock ("ugs-indx") held while one process builds an index concurrently. */
export const INDEX_BUILD_LOCK_KEY = BigInt('0x7567732d696e6478').toString();
/** How often a process waiting for another's index build asks again. */
export const INDEX_BUILD_POLL_MS = 250;
/** The client's own limit on one index build (the server's statement_timeout is lifted for it). */
const INDEX_BUILD_TIMEOUT_MS = 24 * 60 * 60 * 1000;

const sql = statements({
  lock: `SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`,
  level: 'SELECT coalesce(max(version), 0) AS version FROM schema_migrations',
  expansions: 'SELECT version FROM schema_expansions',
  tryBuildLock: `SELECT pg_try_advisory_lock(${INDEX_BUILD_LOCK_KEY}) AS locked`,
  buildUnlock: `SELECT pg_advisory_unlock(${INDEX_BUILD_LOCK_KEY})`,
  indexValid: 'SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = to_regclass(@name)',
  noStatementTimeout: 'SET statement_timeout = 0',
  resetStatementTimeout: 'RESET statement_timeout',
  extensionSchema: `SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = @extension`,
  // The session's own search path (the connection's, e.g. the service's schema) followed by the extension's.
  withExtensionSchema:
    "SELECT set_config('search_path', current_setting('search_path') || ', ' || quote_ident(@schema), false)",
  resetSearchPath: 'RESET search_path',
});

const createRecordTable = (table: string) =>
  statement(`CREATE TABLE IF NOT EXISTS ${table} (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL
  )`)();

const recordStep = (migration: Migration) =>
  statement(
    `INSERT INTO ${recordTableOf(migration)} (version, name, applied_at) VALUES (@version, @name, now())
    ON CONFLICT (version) DO NOTHING`,
  )({ version: migration.version, name: migration.name });

/**
 * Applies pending migrations one per transaction, each under the advisory lock taken before anything
 * else (the record tables' creation included), so processes racing on one database apply every step
 * once; PostgreSQL's DDL is transactional, so a failed step leaves no trace. With nothing pending the
 * only cost is one short transaction. An index built concurrently is the exception: see buildIndex.
 */
export async function migratePostgres(db: PostgresDatabase, migrations: readonly PostgresMigration[]): Promise<number> {
  const applyNext = () =>
    db.transaction(async (tx): Promise<PostgresMigration | undefined> => {
      await tx.rows(sql.lock());
      for (const table of MIGRATION_RECORD_TABLES) await tx.rows(createRecordTable(table));
      const next = nextMigration(await appliedSchema(tx), migrations) as PostgresMigration | undefined;
      if (!next) return next;
      // No parameters: the simple query protocol runs the whole multi-statement script.
      if (next.sql !== '') await runStep(tx, next);
      if (next.concurrentIndexes === undefined) await tx.rows(recordStep(next));
      return next;
    });

  let applied = 0;
  for (let next = await applyNext(); next; next = await applyNext()) {
    if (next.concurrentIndexes !== undefined) {
      for (const index of next.concurrentIndexes) await buildIndex(db, next, index);
      await recordBuilt(db, next);
    }
    applied += 1;
  }
  return applied;
}

/** Runs a step's script; when it needs an extension and fails, the error says which and what to do. */
async function runStep(tx: Queryable, migration: PostgresMigration): Promise<void> {
  try {
    await tx.rows({ text: migration.sql, values: [] });
  } catch (error) {
    if (migration.extension === undefined) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `PostgreSQL schema step ${migration.version} (${migration.name}) needs the extension ${migration.extension}, ` +
        `which this database user could not create (${reason}). Install it once, as a user allowed to ` +
        `(the database owner, from PostgreSQL 13, when the server has it; a superuser otherwise): ` +
        `CREATE EXTENSION IF NOT EXISTS ${migration.extension} in this database (any schema; on a server without ` +
        `it, install the server's contrib package first), then start the service again.`,
      { cause: error },
    );
  }
}

async function appliedSchema(tx: Queryable) {
  const [level] = await tx.rows<{ version: number }>(sql.level());
  const expansions = await tx.rows<{ version: number }>(sql.expansions());
  return { level: level?.version ?? 0, expansions: new Set(expansions.map(({ version }) => version)) };
}

/**
 * Builds one of the step's indexes outside any transaction (recordBuilt then records the step once
 * they are all built). The migration lock is not
 * held meanwhile: a build waits for every transaction older than it, and a process of the previous
 * release blocked on that lock would be one (a deadlock). Builders take a session lock of their own
 * instead, asked for without waiting, so no session waits on it inside a statement. An invalid index
 * left by an interrupted build is dropped and built again.
 */
async function buildIndex(
  db: PostgresDatabase,
  migration: PostgresMigration,
  { name, sql: build }: ConcurrentIndex,
): Promise<void> {
  await db.withWarnings(async (session) => {
    for (;;) {
      const [row] = await session.rows<{ locked: boolean }>(sql.tryBuildLock());
      if (row?.locked) break;
      await sleep(INDEX_BUILD_POLL_MS);
    }
    try {
      await session.rows(sql.noStatementTimeout());
      // The operator class is found through the search path, and the extension may live in a schema
      // of its own (created elsewhere first); the index keeps the class itself, not its name.
      if (migration.extension !== undefined) {
        const [found] = await session.rows<{ schema: string }>(sql.extensionSchema({ extension: migration.extension }));
        if (found) await session.rows(sql.withExtensionSchema({ schema: found.schema }));
      }
      const [index] = await session.rows<{ valid: boolean }>(sql.indexValid({ name }));
      if (index && !index.valid) await session.rows(statement(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`)());
      await session.rows({ text: build, values: [], query_timeout: INDEX_BUILD_TIMEOUT_MS });
    } finally {
      if (migration.extension !== undefined) await session.rows(sql.resetSearchPath());
      await session.rows(sql.resetStatementTimeout());
      await session.rows(sql.buildUnlock());
    }
  });
}

/** Records a step whose indexes are all built. */
async function recordBuilt(db: PostgresDatabase, migration: PostgresMigration): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.rows(sql.lock());
    await tx.rows(recordStep(migration));
  });
}
