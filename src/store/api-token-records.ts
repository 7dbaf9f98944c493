import type { RateLimit } from '../domain/api-tokens/api-token.records.js';

/*
 * What both engines share about api_tokens rows: a token's own rate limit is two nullable columns,
 * both set or both NULL (a CHECK constraint says so).
 */

export function rateLimitFromColumns(perSecond: number | null, burst: number | null): RateLimit | null {
  return perSecond === null || burst === null ? null : { perSecond, burst };
}

/** The named parameters that write a rate limit (or clear it). */
export function rateLimitParameters(rateLimit: RateLimit | null | undefined): {
  rateLimitPerSecond: number | null;
  rateLimitBurst: number | null;
} {
  return { rateLimitPerSecond: rateLimit?.perSecond ?? null, rateLimitBurst: rateLimit?.burst ?? null };
}
