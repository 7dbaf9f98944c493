import Database from 'better-sqlite3';

/** Longest pause between two attempts to get a lock that another connection holds. */
export const MAX_BUSY_PAUSE_MS = 50;

/** Whether another connection holds the lock: the attempt changed nothing and may be retried. */
export function isBusy(error: unknown): boolean {
  return (
    error instanceof Database.SqliteError &&
    (error.code.startsWith('SQLITE_BUSY') || error.code.startsWith('SQLITE_LOCKED'))
  );
}
