import type { DatabaseLocation } from '../config/database-url.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

export function openStore(location: DatabaseLocation): Store {
  if (location.engine === 'sqlite') return openSqliteStore({ path: location.path });
  throw new Error('PostgreSQL is not supported by this release yet; use a sqlite: database URL.');
}
