import type { DatabaseLocation } from '../config/database-url.js';
import { openPostgresStore } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

export function openStore(location: DatabaseLocation): Store {
  return location.engine === 'sqlite' ? openSqliteStore({ path: location.path }) : openPostgresStore({ url: location.url });
}
