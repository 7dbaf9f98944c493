import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { assertNotNewer } from '../migration.js';
import { MIGRATIONS } from './migrations/index.js';
import { openExistingSqliteFile, sqliteKeyIds, sqliteSchemaVersion, type SqliteFileContents } from './sqlite-file.js';

/** What a backup or a restore copied. */
export interface SqliteCopy extends SqliteFileContents {
  bytes: number;
}

/** A temporary file beside `path`, created 0600 and empty: a failed copy never leaves a file under the real name. */
function temporaryBeside(path: string): string {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  closeSync(openSync(temporary, 'wx', 0o600));
  return temporary;
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Refuses a copy that is not a whole, readable database of this program; what it holds otherwise. */
function checkCopy(db: Database.Database, what: string): SqliteFileContents {
  const problems = (db.pragma('integrity_check') as Array<{ integrity_check: string }>).map(
    (row) => row.integrity_check,
  );
  if (problems.length !== 1 || problems[0] !== 'ok')
    throw new Error(`${what} fails SQLite's integrity check: ${problems.slice(0, 3).join('; ')}`);
  const schemaVersion = sqliteSchemaVersion(db);
  if (schemaVersion === 0) throw new Error(`${what} is not a database of this service (it has no schema_migrations).`);
  assertNotNewer(schemaVersion, MIGRATIONS);
  return { keyIds: sqliteKeyIds(db), schemaVersion };
}

/**
 * A consistent copy of the live database at `source` into the new file `target` (0600), taken while
 * servers read and write it. `VACUUM INTO` reads one snapshot in one read transaction, which in WAL
 * mode writers never wait for and which never restarts (SQLite's page-by-page backup API starts over
 * whenever another connection writes, so under steady load it may never finish). The copy is a
 * single file (rollback journal, no -wal), checked with integrity_check before it gets its name.
 */
export function backupSqlite(source: string, target: string): SqliteCopy {
  if (!existsSync(source)) throw new Error(`There is no database at ${source}: nothing to back up.`);
  if (existsSync(target))
    throw new Error(`${target} already exists: a backup never overwrites a file; name a new one.`);
  mkdirSync(dirname(resolve(target)), { recursive: true, mode: 0o700 });
  const temporary = temporaryBeside(target);
  try {
    const db = openExistingSqliteFile(source);
    try {
      db.prepare('VACUUM INTO ?').run(temporary);
    } finally {
      db.close();
    }
    const copy = new Database(temporary, { fileMustExist: true });
    let contents: SqliteFileContents;
    try {
      contents = checkCopy(copy, `The copy of ${source}`);
    } finally {
      copy.close();
    }
    fsyncPath(temporary);
    // A link, not a rename: it fails rather than replace a file that appeared meanwhile.
    linkSync(temporary, target);
    fsyncPath(dirname(resolve(target)));
    return { ...contents, bytes: statSync(target).size };
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** Reads a backup without changing it (a backup is a single file: reading it creates none beside it). */
export function inspectBackup(path: string): SqliteCopy {
  if (!existsSync(path)) throw new Error(`There is no backup at ${path}.`);
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new Error(`${path} cannot be opened as a SQLite database: ${(error as Error).message}`);
  }
  try {
    return { ...checkCopy(db, path), bytes: statSync(path).size };
  } catch (error) {
    if (error instanceof Database.SqliteError)
      throw new Error(`${path} is not a readable SQLite database: ${error.message}`);
    throw error;
  } finally {
    db.close();
  }
}

/**
 * The numbering high-water marks of the database a restore replaces (AUTOINCREMENT's: team_id, API
 * token ids, audit event ids…; the workspaces' schema and data source numbers), so that the restored
 * one never issues again an id handed out after the backup was taken. Undefined when it is unreadable.
 */
interface HighWaterMarks {
  sequences: Array<{ name: string; seq: number }>;
  workspaces: Array<{ id: number; last_schema_id: number; last_data_source_id: number }>;
}

const hasWorkspaceNumbers = (db: Database.Database) =>
  db
    .prepare(
      "SELECT count(*) FROM pragma_table_info('workspaces') WHERE name IN ('last_schema_id', 'last_data_source_id')",
    )
    .pluck()
    .get() === 2;

function highWaterMarks(db: Database.Database): HighWaterMarks | undefined {
  try {
    const hasSequences = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").get() !== undefined;
    return {
      sequences: hasSequences
        ? (db.prepare('SELECT name, seq FROM sqlite_sequence').all() as HighWaterMarks['sequences'])
        : [],
      workspaces: hasWorkspaceNumbers(db)
        ? (db
            .prepare('SELECT id, last_schema_id, last_data_source_id FROM workspaces')
            .all() as HighWaterMarks['workspaces'])
        : [],
    };
  } catch {
    return undefined;
  }
}

function keepHighWaterMarks(db: Database.Database, marks: HighWaterMarks): void {
  const raiseSequence = db.prepare('UPDATE sqlite_sequence SET seq = max(seq, @seq) WHERE name = @name');
  const addSequence = db.prepare(
    "INSERT INTO sqlite_sequence (name, seq) SELECT @name, @seq WHERE EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = @name)",
  );
  const raiseNumbers = hasWorkspaceNumbers(db)
    ? db.prepare(
        `UPDATE workspaces SET last_schema_id = max(last_schema_id, @last_schema_id),
           last_data_source_id = max(last_data_source_id, @last_data_source_id) WHERE id = @id`,
      )
    : undefined;
  db.transaction(() => {
    for (const mark of marks.sequences) if (raiseSequence.run(mark).changes === 0) addSequence.run(mark);
    if (raiseNumbers) for (const mark of marks.workspaces) raiseNumbers.run(mark);
  })();
}

/** Whether another connection (a server, a command) has the database open: SQLite says BUSY. */
const isBusy = (error: unknown) =>
  error instanceof Database.SqliteError &&
  (error.code.startsWith('SQLITE_BUSY') || error.code.startsWith('SQLITE_LOCKED'));

/**
 * Takes the database at `target` for itself, or refuses while anything else has it open. In WAL
 * mode every open connection holds a shared lock for its whole life, idle or not, so an exclusive
 * lock is had only when no server or command is running on the file.
 */
function lockStoppedDatabase(target: string): Database.Database | undefined {
  if (!existsSync(target)) return undefined;
  let db: Database.Database;
  try {
    db = new Database(target, { fileMustExist: true, timeout: 0 });
  } catch {
    return undefined; // not a database at all: nothing can be serving it
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    return db;
  } catch (error) {
    db.close();
    if (isBusy(error))
      throw new Error(
        `${target} is in use (a server or another command has it open): stop every \`ugs serve\` on it, then restore. Nothing was changed.`,
      );
    return undefined; // unreadable (the reason to restore): no process can be using it either
  }
}

/**
 * Puts the backup at `backup` (checked by inspectBackup) in place as the database at `target`, whose
 * deployment is stopped. The copy is made and prepared beside the target, under the lock that keeps
 * servers out; then stale `-wal`/`-shm` files go and the copy takes the database's name in one rename.
 */
export function restoreSqlite(backup: string, target: string): void {
  mkdirSync(dirname(resolve(target)), { recursive: true, mode: 0o700 });
  const held = lockStoppedDatabase(target);
  const temporary = temporaryBeside(target);
  try {
    const marks = held && highWaterMarks(held);
    copyFileSync(backup, temporary);
    chmodSync(temporary, 0o600);
    const copy = new Database(temporary, { fileMustExist: true });
    try {
      if (marks) keepHighWaterMarks(copy, marks);
      // The served database's mode, so that the first start after the restore writes nothing before its checks.
      copy.pragma('journal_mode = WAL');
    } finally {
      copy.close();
    }
    fsyncPath(temporary);
    held?.close();
    for (const suffix of ['-wal', '-shm', '-journal']) rmSync(`${target}${suffix}`, { force: true });
    renameSync(temporary, target);
    fsyncPath(dirname(resolve(target)));
  } finally {
    if (held?.open) held.close();
    rmSync(temporary, { force: true });
  }
}
