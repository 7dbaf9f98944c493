import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { mapSqliteError } from './sqlite-errors.js';

/** The synchronous shape of an async interface: better-sqlite3 does the work, `guard` makes it async. */
export type Synchronous<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : never;
};

const MAX_PAUSE_MS = 50;

function isBusy(error: unknown): boolean {
  return error instanceof Database.SqliteError && (error.code.startsWith('SQLITE_BUSY') || error.code.startsWith('SQLITE_LOCKED'));
}

/**
 * Turns synchronous methods into the async interface, sending every failure through mapSqliteError.
 * better-sqlite3 waits for a lock synchronously, which would stall every request of the process, so
 * the connection waits only briefly and a busy method is retried here, asynchronously, until
 * `busyTimeoutMs` has passed. Each method is one transaction, so a busy attempt changed nothing.
 */
export function guard<T>(methods: Synchronous<T>, { busyTimeoutMs }: { busyTimeoutMs: number }): T {
  const guarded: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(methods)) {
    const call = method as (...args: unknown[]) => unknown;
    guarded[name] = async (...args: unknown[]) => {
      const deadline = Date.now() + busyTimeoutMs;
      for (let pause = 2; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
        try {
          return call(...args);
        } catch (error) {
          if (!isBusy(error) || Date.now() + pause > deadline) return mapSqliteError(error);
          await sleep(pause);
        }
      }
    };
  }
  return guarded as T;
}
