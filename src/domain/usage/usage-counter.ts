import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Environment, Tenant } from '../tenancy.js';
import type { UsageStore } from './usage.port.js';
import type { UsageIncrement } from './usage.records.js';
import { DAY_MS, dayOf, firstKeptDay } from './usage.rules.js';

/**
 * What the hot path calls once it has answered with a group (docs/api.md#usage-per-group): a Map lookup and an
 * increment, no await, no allocation except a group's first count after a window without any.
 */
export interface UsageCounter {
  minted(tenant: Tenant, teamId: number): void;
  verified(tenant: Tenant, teamId: number): void;
  read(tenant: Tenant, teamId: number): void;
}

/** For the CLI and any process that does not count (`ugs serve --usage off`). */
export const NO_USAGE_COUNTING: UsageCounter = {
  minted: () => undefined,
  verified: () => undefined,
  read: () => undefined,
};

export interface UsageRecorder extends UsageCounter {
  /** Writes what was counted so far; flushes run one after another. Never rejects. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left: part of a graceful stop. */
  stop(): Promise<void>;
  /** Tells `listener` of every batch counted, before it is written: /metrics counts per workspace from it. */
  observe(listener: (counted: readonly UsageIncrement[]) => void): void;
}

export interface UsageRecorderOptions {
  store: Pick<UsageStore, 'addUsage' | 'pruneUsage'>;
  /** How often the counts are written; a kill -9 loses at most this long's counts (plus a flush in flight). */
  flushMs: number;
  /** Milliseconds since the epoch: the UTC day a count belongs to. */
  now?: () => number;
  /** Told of a write that failed (its counts are kept for the next flush). */
  warn?: (message: string, error: unknown) => void;
}

/** How often old days are pruned (each process; the deletes are idempotent). */
const PRUNE_EVERY_MS = 3_600_000;

/**
 * Increments per write of a flush. SQLite writes on the service's only thread: 50 000 groups' counts
 * in one transaction held every request for about 250 ms at 10 000 000 groups (docs/performance.md,
 * "Ten million groups (SQLite)"); a slice of 2 000 holds them for some 10 ms, and the event loop turns
 * between slices.
 */
export const USAGE_WRITE_SLICE = 2_000;

interface Entry {
  workspaceId: number;
  environment: Environment;
  teamId: number;
  day: string;
  embedTokensMinted: number;
  verifications: number;
  reads: number;
}

/**
 * Counts in memory, per group of the current UTC day, and writes the counts every `flushMs` as
 * additive upserts (UsageStore.addUsage): each process adds only what it counted since its last
 * write, so any number of processes and instances count every request once. A flush writes in
 * slices of USAGE_WRITE_SLICE; a failed write keeps its counts for the next flush (the transaction
 * added nothing).
 */
export function createUsageRecorder({
  store,
  flushMs,
  now = Date.now,
  warn = () => undefined,
}: UsageRecorderOptions): UsageRecorder {
  let counts = new Map<number, Entry>();
  // Counts of days already over (and of failed writes), written with the next flush.
  let carried: Entry[] = [];
  let day = '';
  let dayEnds = 0;
  let lastPrune = 0;
  const listeners: Array<(counted: readonly UsageIncrement[]) => void> = [];

  const entryOf = (tenant: Tenant, teamId: number): Entry => {
    const at = now();
    if (at >= dayEnds) {
      for (const entry of counts.values()) if (counted(entry)) carried.push(entry);
      counts = new Map();
      day = dayOf(at);
      dayEnds = (Math.floor(at / DAY_MS) + 1) * DAY_MS;
    }
    let entry = counts.get(teamId);
    if (entry === undefined) {
      entry = {
        workspaceId: tenant.workspaceId,
        environment: tenant.environment,
        teamId,
        day,
        embedTokensMinted: 0,
        verifications: 0,
        reads: 0,
      };
      counts.set(teamId, entry);
    }
    return entry;
  };

  async function flushOnce(prune: boolean): Promise<void> {
    // Each group's counts since the last flush, copied, and its entry zeroed for the next window: a
    // group keeps its entry while it is counted, so the hot path allocates nothing once it knows the
    // group, and a group counted in no window since the last flush leaves the map.
    const fresh: Entry[] = [];
    for (const [teamId, entry] of counts)
      if (!counted(entry)) counts.delete(teamId);
      else {
        fresh.push({ ...entry });
        entry.embedTokensMinted = 0;
        entry.verifications = 0;
        entry.reads = 0;
      }
    // The current day's counts are one per group already; only counts carried over need merging.
    const batch = carried.length === 0 ? fresh : merged([...carried, ...fresh]);
    carried = [];
    if (fresh.length > 0) for (const listener of listeners) listener(fresh);
    // Slice by slice: a failed write keeps its slice and the ones after it for the next flush (a slice's
    // transaction adds all of it or nothing); the slices before it are written.
    for (let start = 0; start < batch.length; start += USAGE_WRITE_SLICE) {
      // The I/O that waited goes first: a write on SQLite returns without letting it.
      if (start > 0) await yieldToEventLoop();
      try {
        await store.addUsage(batch.slice(start, start + USAGE_WRITE_SLICE));
      } catch (error) {
        carried.push(...batch.slice(start));
        warn('usage counts could not be written; they are kept for the next flush', error);
        break;
      }
    }
    const at = now();
    if (prune && at - lastPrune >= PRUNE_EVERY_MS) {
      lastPrune = at;
      await store.pruneUsage(firstKeptDay(dayOf(at))).catch((error: unknown) => {
        warn('old usage counts could not be pruned', error);
      });
    }
  }

  let flushing: Promise<void> = Promise.resolve();
  const flush = (prune = false) => (flushing = flushing.then(() => flushOnce(prune)));
  // Old days are pruned from the timer's flushes only: a stop, or a flush a test asks for, writes and no more.
  const timer = setInterval(() => void flush(true), flushMs);
  // The timer alone never keeps a process alive: a stop writes what is left.
  timer.unref();

  return {
    minted: (tenant, teamId) => {
      entryOf(tenant, teamId).embedTokensMinted++;
    },
    verified: (tenant, teamId) => {
      entryOf(tenant, teamId).verifications++;
    },
    read: (tenant, teamId) => {
      entryOf(tenant, teamId).reads++;
    },
    flush: () => flush(),
    observe: (listener) => {
      listeners.push(listener);
    },
    stop: () => {
      clearInterval(timer);
      return flush();
    },
  };
}

const counted = (entry: Entry) => entry.embedTokensMinted > 0 || entry.verifications > 0 || entry.reads > 0;

/** One increment per group and day: one statement may not upsert the same row twice. */
function merged(entries: Entry[]): Entry[] {
  const byKey = new Map<string, Entry>();
  for (const entry of entries) {
    const key = `${entry.teamId}|${entry.day}`;
    const known = byKey.get(key);
    if (known === undefined) byKey.set(key, { ...entry });
    else {
      known.embedTokensMinted += entry.embedTokensMinted;
      known.verifications += entry.verifications;
      known.reads += entry.reads;
    }
  }
  return [...byKey.values()];
}
