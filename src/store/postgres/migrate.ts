import { assertNotNewer } from '../migration.js';
import type { Migration } from '../migration.js';
import type { PostgresDatabase } from './postgres-database.js';
import { statements } from './statements.js';

/**
 * Key of the transaction-scoped advisory lock that serialises migrations across every process on the
 * database. Any fixed bigint works as long as it never changes; this one spells "ugs-migr" in ASCII.
 */
const MIGRATION_LOCK_KEY = '0x7567732d6d696772';

const sql = statements({
  lock: `SELECT pg_advisory_xact_lock(${BigInt(MIGRATION_LOCK_KEY).toString()})`,
  createTable: `CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at timestamptz NOT NULL
  )`,
  applied: 'SELECT coalesce(max(version), 0) AS version FROM schema_migrations',
  record: 'INSERT INTO schema_migrations (version, name, applied_at) VALUES (@version, @name, now())',
});

/**
 * Applies pending migrations one per transaction, each under the advisory lock taken before anything
 * else (creating schema_migrations included), so processes racing on one database apply every step
 * once; PostgreSQL's DDL is transactional, so a failed step leaves no trace. With nothing pending the
 * only cost is one short transaction.
 */
export async function migratePostgres(db: PostgresDatabase, migrations: readonly Migration[]): Promise<number> {
  const applyNext = () =>
    db.transaction(async (tx): Promise<boolean> => {
      await tx.rows(sql.lock());
      await tx.rows(sql.createTable());
      const [row] = await tx.rows<{ version: number }>(sql.applied());
      const applied = row?.version ?? 0;
      assertNotNewer(applied, migrations);
      const next = migrations.find((migration) => migration.version > applied);
      if (!next) return false;
      // No parameters: the simple query protocol runs the whole multi-statement script.
      await tx.rows({ text: next.sql, values: [] });
      await tx.rows(sql.record({ version: next.version, name: next.name }));
      return true;
    });

  let applied = 0;
  while (await applyNext()) applied += 1;
  return applied;
}
