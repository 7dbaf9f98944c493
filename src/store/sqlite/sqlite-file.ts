import { existsSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { CIPHERTEXT_KINDS } from '../../domain/encryption-keys/ciphertext.records.js';
import { storedKeyIds, type StoredKeyId } from '../../domain/encryption-keys/key-rotation.service.js';
import { CIPHERTEXT_COLUMNS, keyIdOf } from '../ciphertext-columns.js';

/** What a SQLite database file holds, as far as its keys and schema go. */
export interface SqliteFileContents {
  /** The key ids of its ciphertexts, over the encrypted columns its schema has. */
  keyIds: StoredKeyId[];
  /** The last migration applied (0: none). */
  schemaVersion: number;
}

/**
 * Opens an existing file for reading only. Not SQLite's read-only mode: a read-only connection to
 * a WAL database leaves its `-wal` and `-shm` files behind, whereas a read-write connection that
 * writes nothing removes them on close (when it is the last), so the folder is left as it was.
 */
export function openExistingSqliteFile(path: string): Database.Database {
  return new Database(path, { fileMustExist: true, timeout: 5_000 });
}

/** The key ids of the ciphertexts `db` holds; a column its (older) schema lacks holds none. */
export function sqliteKeyIds(db: Database.Database): StoredKeyId[] {
  const hasColumn = db.prepare('SELECT 1 FROM pragma_table_info(?) WHERE name = ?').pluck();
  const counts = CIPHERTEXT_KINDS.flatMap((kind) => {
    const { table, column } = CIPHERTEXT_COLUMNS[kind];
    if (hasColumn.get(table, column) === undefined) return [];
    return db
      .prepare(
        `SELECT ${keyIdOf(column)} AS keyId, count(*) AS count FROM ${table} WHERE ${column} IS NOT NULL GROUP BY 1`,
      )
      .all() as Array<{ keyId: string; count: number }>;
  });
  return storedKeyIds(counts);
}

export function sqliteSchemaVersion(db: Database.Database): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (table === undefined) return 0;
  return db.prepare('SELECT coalesce(max(version), 0) FROM schema_migrations').pluck().get() as number;
}

/**
 * What the database file at `path` holds, read without writing anything, or undefined when there is
 * no database there yet (no file, an empty one, or one without tables: what a first start makes).
 */
export function inspectSqliteFile(path: string): SqliteFileContents | undefined {
  if (!existsSync(path) || statSync(path).size === 0) return undefined;
  const db = openExistingSqliteFile(path);
  try {
    const tables = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'").pluck().get() as number;
    if (tables === 0) return undefined;
    return { keyIds: sqliteKeyIds(db), schemaVersion: sqliteSchemaVersion(db) };
  } finally {
    db.close();
  }
}
