import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The one retry policy for contention (concurrency never surfaces as an error). An attempt
 * that lost to a concurrent change of the same rows — a conditional write that found another
 * version, a deadlock, a serialization failure — changed nothing, so it runs again, after a short
 * random pause, for as long as a statement may wait for a lock. Each round has a winner, so N
 * writers contending for one group are all through within N rounds; the budget only runs out when
 * the database stops making progress, which is what 503 means.
 *
 * One budget per operation: a retry loop inside another (a service's re-read and re-decide around a
 * store's transaction that retries a deadlock) runs against the outer loop's deadline, so however the
 * loops nest, one request spends at most CONTENTION_BUDGET_MS retrying.
 */
export const CONTENTION_BUDGET_MS = 5000;

/** The longest pause between two rounds; pauses start near zero and grow, each drawn at random ("full jitter"). */
const MAX_PAUSE_MS = 20;

/** What an attempt returns when it lost and changed nothing. */
export const LOST_TO_CONCURRENT_CHANGE = Symbol('lost to a concurrent change');

/** The deadline (performance.now() time) of the outermost retry loop the current code runs in. */
const deadlineOfOperation = new AsyncLocalStorage<number>();

export async function retryWhileContended<T>(
  attempt: () => Promise<T | typeof LOST_TO_CONCURRENT_CHANGE>,
  givenUp: () => Error,
  budgetMs: number = CONTENTION_BUDGET_MS,
): Promise<T> {
  const deadline = deadlineOfOperation.getStore() ?? performance.now() + budgetMs;
  return deadlineOfOperation.run(deadline, async () => {
    for (let round = 1; ; round += 1) {
      const result = await attempt();
      if (result !== LOST_TO_CONCURRENT_CHANGE) return result;
      if (performance.now() >= deadline) throw givenUp();
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(MAX_PAUSE_MS, 2 ** round)));
    }
  });
}

/** What is left of the current operation's retry budget, in ms; undefined outside any retry loop. */
export function remainingBudgetMs(): number | undefined {
  const deadline = deadlineOfOperation.getStore();
  return deadline === undefined ? undefined : Math.max(0, deadline - performance.now());
}
