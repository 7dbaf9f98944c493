import type { DatabaseLocation } from '../config/database-url.js';
import { openPostgresStore } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from '../domain/store.port.js';
import { inspectSqliteFile, type SqliteFileContents } from './sqlite/sqlite-file.js';

/** `poolSize` bounds a PostgreSQL store's connections; SQLite has one connection per process. */
export function openStore(location: DatabaseLocation, options: { poolSize?: number } = {}): Store {
  return location.engine === 'sqlite'
    ? openSqliteStore({ path: location.path })
    : openPostgresStore({ url: location.url, poolSize: options.poolSize });
}

/**
 * What an existing SQLite database holds, read without writing (undefined for a new one, and for
 * PostgreSQL, which is checked through the store).
 */
export function inspectBeforeOpening(location: DatabaseLocation): SqliteFileContents | undefined {
  return location.engine === 'sqlite' ? inspectSqliteFile(location.path) : undefined;
}
