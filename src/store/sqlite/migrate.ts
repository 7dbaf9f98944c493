import type { Database } from 'better-sqlite3';
import { MIGRATION_RECORD_TABLES, nextMigration, recordTableOf } from '../migration.js';
import type { Migration } from '../migration.js';

/**
 * Applies pending migrations one per BEGIN IMMEDIATE transaction. Each transaction reads what is
 * applied under the write lock before acting, so processes racing on one file apply every step once;
 * with nothing pending the only cost is one empty write transaction.
 */
export function migrateSqlite(db: Database, migrations: readonly Migration[]): number {
  const applyNext = db.transaction((): boolean => {
    for (const table of MIGRATION_RECORD_TABLES) {
      db.exec(`CREATE TABLE IF NOT EXISTS ${table} (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at TEXT NOT NULL
      )`);
    }
    const level = db.prepare('SELECT coalesce(max(version), 0) FROM schema_migrations').pluck().get() as number;
    const expansions = new Set(db.prepare('SELECT version FROM schema_expansions').pluck().all() as number[]);
    const next = nextMigration({ level, expansions }, migrations);
    if (!next) return false;
    db.exec(next.sql);
    db.prepare(`INSERT INTO ${recordTableOf(next)} (version, name, applied_at) VALUES (?, ?, ?)`).run(
      next.version,
      next.name,
      new Date().toISOString(),
    );
    return true;
  });

  let applied = 0;
  while (applyNext.immediate()) applied += 1;
  return applied;
}
