import { setImmediate as yieldToEventLoop, setTimeout as sleep } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import { isBusy, MAX_BUSY_PAUSE_MS } from './busy.js';
import { mapSqliteError } from './sqlite-errors.js';

interface QueuedWrite {
  write: () => unknown;
  deadline: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Bounds how long one batch holds the event loop (and the write lock). */
const MAX_BATCH = 256;

function settleError(queued: QueuedWrite, error: unknown): void {
  try {
    mapSqliteError(error);
  } catch (mapped) {
    queued.reject(mapped);
  }
}

/**
 * Group commit: the writes that arrive in one event-loop turn share one transaction, so they share
 * one fsync of `synchronous=FULL` instead of paying one each. Every write still runs in its own
 * savepoint (better-sqlite3 nests a transaction function inside an open transaction that way), so a
 * write that fails rolls back alone and the others commit. No write is acknowledged before the
 * COMMIT that makes it durable has returned.
 */
export function createGroupCommit(db: Database, { busyTimeoutMs }: { busyTimeoutMs: number }) {
  const queue: QueuedWrite[] = [];
  let scheduled = false;

  /** Runs one batch; returns the busy error when another connection held the write lock and nothing ran. */
  const commitBatch = (batch: QueuedWrite[]): unknown => {
    try {
      db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      if (isBusy(error)) return error;
      for (const queued of batch) settleError(queued, error);
      return undefined;
    }
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    for (const queued of batch) {
      try {
        outcomes.push({ ok: true, value: queued.write() });
      } catch (error) {
        outcomes.push({ ok: false, error });
      }
    }
    try {
      // Some failures (I/O, a full disk) make SQLite roll the whole transaction back by itself: then
      // nothing of the batch is stored and no write may report success.
      if (!db.inTransaction)
        throw outcomes.find((outcome) => !outcome.ok)?.error ?? new Error('transaction ended early');
      db.exec('COMMIT');
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      for (const queued of batch) settleError(queued, error);
      return undefined;
    }
    batch.forEach((queued, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) queued.resolve(outcome.value);
      else settleError(queued, outcome.error);
    });
    return undefined;
  };

  const drain = async (): Promise<void> => {
    try {
      for (let pause = 2; queue.length > 0;) {
        const batch = queue.splice(0, MAX_BATCH);
        const busy = commitBatch(batch);
        if (busy === undefined) {
          pause = 2;
          // Let the requests of this turn queue up behind the batch before the next one starts.
          await yieldToEventLoop();
          continue;
        }
        // Another process holds the write lock: writes past their deadline fail as unavailable, the
        // rest wait and try again, without blocking the event loop.
        const now = Date.now();
        const waiting = batch.filter((queued) => {
          if (queued.deadline > now) return true;
          settleError(queued, busy);
          return false;
        });
        queue.unshift(...waiting);
        await sleep(pause);
        pause = Math.min(pause * 2, MAX_BUSY_PAUSE_MS);
      }
    } finally {
      scheduled = false;
    }
  };

  return {
    /** Queues `write` (a synchronous, self-contained transaction function) for the next batch. */
    run<R>(write: () => R): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        queue.push({
          write,
          deadline: Date.now() + busyTimeoutMs,
          resolve: resolve as (value: unknown) => void,
          reject,
        });
        if (scheduled) return;
        scheduled = true;
        setImmediate(() => void drain());
      });
    },
  };
}

export type GroupCommit = ReturnType<typeof createGroupCommit>;
