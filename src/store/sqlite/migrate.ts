import type { Database } from 'better-sqlite3';
import { assertNotNewer } from '../migration.js';
import type { Migration } from '../migration.js';

/**
 * Applies pending migrations one per BEGIN IMMEDIATE transaction. Each transaction reads the applied
 * version under the write lock before acting, so processes racing on one file apply every step once;
 * with nothing pending the only cost is one empty write transaction.
 */
export function migrateSqlite(db: Database, migrations: readonly Migration[]): number {
  const applyNext = db.transaction((): boolean => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at TEXT NOT NULL
    )`);
    const applied = db.prepare('SELECT coalesce(max(version), 0) FROM schema_migrations').pluck().get() as number;
    assertNotNewer(applied, migrations);
    const next = migrations.find((migration) => migration.version > applied);
    if (!next) return false;
    db.exec(next.sql);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
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
