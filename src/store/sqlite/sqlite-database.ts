import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export interface SqliteStoreOptions {
  path: string;
  busyTimeoutMs?: number;
}

export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/** How long one statement may block the event loop waiting for a lock; `retryWhileBusy` retries beyond it. */
export const SYNC_BUSY_WAIT_MS = 20;

export function busyTimeoutOf(options: SqliteStoreOptions): number {
  return Math.max(0, Math.trunc(options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS));
}

const WAL_RETRY_PAUSE_MS = 10;

export const PAGE_CACHE_KIB = 64 * 1024;

function pauseSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * SQLite does not call the busy handler while switching a fresh file to WAL, so processes opening a
 * new database together can get SQLITE_BUSY at once; retry for as long as the busy timeout allows.
 */
function enableWal(db: Database.Database, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      const busy = error instanceof Database.SqliteError && error.code.startsWith('SQLITE_BUSY');
      if (!busy || Date.now() >= deadline) throw error;
      pauseSync(WAL_RETRY_PAUSE_MS);
    }
  }
}

/**
 * Names, properties and the audit trail are for the service's user alone (docs/deployment.md#one-machine-sqlite): a missing
 * directory is created 0700 and a missing database file 0600 before SQLite opens it, whatever the
 * umask; SQLite gives the WAL and shared-memory files it creates the database file's mode. Existing
 * files keep the mode their operator gave them.
 */
function createOwnerOnly(file: string): void {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  try {
    fs.closeSync(fs.openSync(file, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** Opens (creating if need be) the database file with the connection settings the store relies on. */
export function openSqliteDatabase(options: SqliteStoreOptions): Database.Database {
  const busyTimeoutMs = busyTimeoutOf(options);
  const syncWaitMs = Math.min(busyTimeoutMs, SYNC_BUSY_WAIT_MS);
  createOwnerOnly(options.path);
  const db = new Database(options.path, { timeout: syncWaitMs });
  try {
    db.pragma(`busy_timeout = ${syncWaitMs}`);
    enableWal(db, busyTimeoutMs);
    // FULL syncs the WAL on every commit: a success is only reported once the change is on disk.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    // 64 MiB of page cache per connection (SQLite's default is 2 MiB): the interior pages of the
    // user_groups indexes of a million groups stay in memory instead of a pread() per lookup.
    db.pragma(`cache_size = ${-PAGE_CACHE_KIB}`);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
