import type { DatabaseLocation } from '../config/database-url.js';
import { openPostgresStore } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from '../domain/store.port.js';

/** `poolSize` bounds a PostgreSQL store's connections; SQLite has one connection per process. */
export function openStore(location: DatabaseLocation, options: { poolSize?: number } = {}): Store {
  return location.engine === 'sqlite'
    ? openSqliteStore({ path: location.path })
    : openPostgresStore({ url: location.url, poolSize: options.poolSize });
}
