import { performance } from 'node:perf_hooks';
import { createTokenBuckets, type RateLimitDecision, type RateLimitPolicy } from './token-bucket.js';

/**
 * Takes one token from the bucket of `key` under `policy`. Asynchronous so that the buckets may live
 * elsewhere (the cluster primary) without the callers knowing.
 */
export interface RateLimiter {
  take(key: string, policy: RateLimitPolicy): Promise<RateLimitDecision>;
}

/** Buckets in this process, on a monotonic clock (a wall-clock step must not refill or drain them). */
export function createLocalRateLimiter(nowMs: () => number = () => performance.now()): RateLimiter {
  const take = createTokenBuckets(nowMs);
  return { take: async (key, policy) => take(key, policy) };
}
