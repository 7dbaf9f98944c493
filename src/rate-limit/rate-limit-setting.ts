import type { RateLimiter } from './rate-limiter.js';
import type { RateLimitPolicy } from './token-bucket.js';

/*
 * How rates are written on the command line and in the environment: `<n>/s`, `<n>/min`, or a bare
 * `<n>`, which means per minute (what --rate-limit took before it had units).
 */

/** What `ugs serve --rate-limit` says when unset: generous enough never to slow a dashboard's backend. */
export const DEFAULT_RATE_LIMIT = '1000/s';

const RATE = /^([1-9][0-9]*)(?:\/(s|min))?$/;
const SECONDS_PER_UNIT = { s: 1, min: 60 } as const;

export interface Rate {
  perSecond: number;
  /** The burst when none is given: one unit's worth, the `n` of `<n>/<unit>`. */
  defaultBurst: number;
}

export function parseRate(text: string): Rate {
  const match = RATE.exec(text.trim());
  const count = Number(match?.[1]);
  if (!match || !Number.isSafeInteger(count)) {
    throw new Error(
      `"${text}" is not a rate: write <n>/s or <n>/min with a positive whole number n (a bare n means per minute).`,
    );
  }
  const unit = (match[2] ?? 'min') as keyof typeof SECONDS_PER_UNIT;
  return { perSecond: count / SECONDS_PER_UNIT[unit], defaultBurst: count };
}

/** A rate, or `off`. */
export function parseRateSetting(text: string): Rate | 'off' {
  return text.trim() === 'off' ? 'off' : parseRate(text);
}

/** A burst: how many requests a full bucket admits at once. */
export function parseBurst(text: string): number {
  const burst = Number(text);
  if (!/^[1-9][0-9]*$/.test(text.trim()) || !Number.isSafeInteger(burst))
    throw new Error(`"${text}" is not a burst: write a positive whole number of requests.`);
  return burst;
}

/** A rate as `--rate-limit` takes it: per second when whole, else per minute (e.g. `50/s`, `10/min`). */
export function formatRate(perSecond: number): string {
  if (Number.isInteger(perSecond)) return `${perSecond}/s`;
  const perMinute = perSecond * 60;
  return Number.isInteger(Math.round(perMinute * 1e6) / 1e6) ? `${Math.round(perMinute)}/min` : `${perSecond}/s`;
}

/** A token's limit for people: `50/s, burst 100`, or `default` (the server's). */
export function rateLimitLabel(policy: RateLimitPolicy | null): string {
  return policy ? `${formatRate(policy.perSecond)}, burst ${policy.burst}` : 'default';
}

/**
 * A token's limit after `ugs tokens update`: what the flags name changes and the rest stays the
 * token's own (a new rate keeps the burst; a burst alone keeps the rate). A token on the server's
 * default has no burst to keep: a rate then brings its own, and a burst alone has no rate to go with.
 */
export function updatedRateLimit(
  current: RateLimitPolicy | null,
  rate: Rate | undefined,
  burst: number | undefined,
): RateLimitPolicy {
  if (rate) return { perSecond: rate.perSecond, burst: burst ?? current?.burst ?? rate.defaultBurst };
  if (burst === undefined) throw new Error('Give --rate-limit, --rate-limit-burst or both.');
  if (!current)
    throw new Error("The token has no rate limit of its own (it uses the server's): give --rate-limit too.");
  return { perSecond: current.perSecond, burst };
}

/** The bucket a rate and an optional burst describe. */
export function rateLimitPolicy(rate: Rate, burst: number | undefined): RateLimitPolicy {
  return { perSecond: rate.perSecond, burst: burst ?? rate.defaultBurst };
}

/** Rate limiting of /api: where the buckets are, and the policy of a token without one of its own. */
export interface RateLimiting {
  limiter: RateLimiter;
  defaultPolicy: RateLimitPolicy;
}

export type RateLimitOption = RateLimiting | 'off';
