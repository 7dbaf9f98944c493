import { requestFailure } from '../wire/request-errors.js';
import type { FastifyReply } from 'fastify';
import type { ApiTokenCaller } from '../domain/api-tokens/api-token-admission.js';
import type { RateLimitDecision, RateLimitPolicy } from '../rate-limit/token-bucket.js';

import type { RateLimiting } from '../rate-limit/rate-limit-setting.js';

const WINDOWS = [
  { seconds: 1, unit: 'second' },
  { seconds: 60, unit: 'minute' },
  { seconds: 3600, unit: 'hour' },
] as const;

/** The rate as a whole number of requests per second, minute or hour: exact when it can be. */
function quotaPerWindow(perSecond: number): { quota: number; seconds: number; unit: string } {
  const exact = WINDOWS.find(({ seconds }) => {
    const quota = perSecond * seconds;
    return quota >= 1 && Math.abs(quota - Math.round(quota)) < 1e-6;
  });
  const window = exact ?? WINDOWS[2];
  return { quota: Math.max(1, Math.round(perSecond * window.seconds)), seconds: window.seconds, unit: window.unit };
}

/**
 * The IETF draft's headers (draft-ietf-httpapi-ratelimit-headers): the limit is the bucket's size,
 * the reset is when it is full again, and the policy says how fast it refills.
 */
function rateLimitHeaders(
  policy: RateLimitPolicy,
  { quota, seconds }: ReturnType<typeof quotaPerWindow>,
  decision: RateLimitDecision,
): Record<string, string> {
  return {
    'RateLimit-Limit': String(policy.burst),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.resetSeconds),
    'RateLimit-Policy': `${quota};w=${seconds};burst=${policy.burst}`,
  };
}

/** Takes a token from the caller's bucket and sets the RateLimit headers; throws rate_limited when it is empty. */
export type RequestAdmission = (reply: FastifyReply, caller: ApiTokenCaller) => Promise<void>;

export function createRateLimit({ limiter, defaultPolicy }: RateLimiting): RequestAdmission {
  return async function rateLimit(reply, caller) {
    const policy = caller.rateLimit ?? defaultPolicy;
    const decision = await limiter.take(String(caller.actor.apiTokenId), policy);
    const window = quotaPerWindow(policy.perSecond);
    reply.headers(rateLimitHeaders(policy, window, decision));
    if (!decision.allowed) {
      const { quota, unit } = window;
      throw requestFailure.rateLimited(quota, unit, policy.burst, decision.retryAfterSeconds);
    }
  };
}
