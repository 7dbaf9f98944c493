import { LRUCache } from 'lru-cache';

/** A token bucket: holds at most `burst` tokens and gains `perSecond` a second; a request takes one. */
export interface RateLimitPolicy {
  perSecond: number;
  burst: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Whole seconds until the bucket is full again (0 when it is). */
  resetSeconds: number;
  /** Whole seconds (at least 1) until the next token: when a refused request may be retried. */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedAtMs: number;
}

/** Buckets kept at most; a few MB. */
export const MAX_BUCKETS = 100_000;

/**
 * The buckets of one limiter, keyed by whatever is limited (an API token id), on an injected clock
 * in milliseconds. A bucket that has never been seen is full, and one idle long enough to be full is
 * the same as none: so the least recently used ones may be dropped to bound memory.
 */
export function createTokenBuckets(nowMs: () => number, maxBuckets = MAX_BUCKETS) {
  const buckets = new LRUCache<string, Bucket>({ max: maxBuckets });

  return function take(key: string, policy: RateLimitPolicy): RateLimitDecision {
    const now = nowMs();
    const bucket = buckets.get(key) ?? { tokens: policy.burst, updatedAtMs: now };
    const elapsedSeconds = Math.max(0, now - bucket.updatedAtMs) / 1000;
    // A policy changed since the last request applies at once: a smaller burst caps what is saved.
    let tokens = Math.min(policy.burst, bucket.tokens + elapsedSeconds * policy.perSecond);
    const allowed = tokens >= 1;
    if (allowed) tokens -= 1;
    buckets.set(key, { tokens, updatedAtMs: now });
    return {
      allowed,
      remaining: Math.floor(tokens),
      resetSeconds: Math.ceil((policy.burst - tokens) / policy.perSecond),
      retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / policy.perSecond)),
    };
  };
}
