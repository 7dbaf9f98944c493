import { setTimeout as sleep } from 'node:timers/promises';
import { remainingBudgetMs } from '../../domain/retry-policy.js';
import { isBusy, MAX_BUSY_PAUSE_MS } from './busy.js';
import type { GroupCommit } from './group-commit.js';
import { mapSqliteError } from './sqlite-errors.js';

/** The synchronous shape of an async interface: better-sqlite3 does the work, `retryWhileBusy` makes it async. */
export type Synchronous<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : never;
};

/**
 * Turns synchronous methods into the async interface, sending every failure through mapSqliteError.
 * better-sqlite3 waits for a lock synchronously, which would stall every request of the process, so
 * the connection waits only briefly and a busy method is retried here, asynchronously, until
 * `busyTimeoutMs` has passed (or what is left of the operation's retry budget, if less). Each method is one transaction, so a busy attempt changed nothing.
 * The methods named in `grouped` (the hot writes) go through the group commit instead, which does the
 * same waiting for a whole batch.
 */
export function retryWhileBusy<T>(
  methods: Synchronous<T>,
  {
    busyTimeoutMs,
    grouped,
  }: { busyTimeoutMs: number; grouped?: { commit: GroupCommit; methods: ReadonlyArray<keyof T> } },
): T {
  const retrying: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(methods)) {
    const call = method as (...args: unknown[]) => unknown;
    if (grouped?.methods.includes(name as keyof T)) {
      const { commit } = grouped;
      retrying[name] = (...args: unknown[]) => commit.run(() => call(...args));
      continue;
    }
    retrying[name] = async (...args: unknown[]) => {
      // Inside a retry loop of the operation (src/domain/retry-policy.ts), waiting for the lock spends
      // the same budget, so nested waits never add up to more than one.
      const deadline = Date.now() + Math.min(busyTimeoutMs, remainingBudgetMs() ?? busyTimeoutMs);
      for (let pause = 2; ; pause = Math.min(pause * 2, MAX_BUSY_PAUSE_MS)) {
        try {
          return call(...args);
        } catch (error) {
          if (!isBusy(error) || Date.now() + pause > deadline) return mapSqliteError(error);
          await sleep(pause);
        }
      }
    };
  }
  return retrying as T;
}
