import { requestFailure } from '../wire/request-errors.js';
import type { FastifyReply } from 'fastify';
import { callerKey, type RequestCaller } from '../domain/console-sessions/oidc-session.records.js';
import type { RateLimitPolicy } from '../rate-limit/token-bucket.js';

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

/** What a policy's headers say whatever the bucket holds: its window and the two constant headers. */
interface PolicyHeaders {
  window: ReturnType<typeof quotaPerWindow>;
  limit: string;
  policy: string;
}

/**
 * The headers of each policy, worked out once: every /api request sets them, and a token's own
 * policy comes as a new object with each lookup that reads it, so they are kept by the policy's two
 * numbers (a handful of distinct policies per server).
 */
function policyHeadersCache(): (policy: RateLimitPolicy) => PolicyHeaders {
  const byRate = new Map<number, Map<number, PolicyHeaders>>();
  return (policy) => {
    let byBurst = byRate.get(policy.perSecond);
    if (byBurst === undefined) byRate.set(policy.perSecond, (byBurst = new Map()));
    let headers = byBurst.get(policy.burst);
    if (headers === undefined) {
      const window = quotaPerWindow(policy.perSecond);
      headers = {
        window,
        limit: String(policy.burst),
        policy: `${window.quota};w=${window.seconds};burst=${policy.burst}`,
      };
      byBurst.set(policy.burst, headers);
    }
    return headers;
  };
}

/** Takes a token from the caller's bucket and sets the RateLimit headers; throws rate_limited when it is empty. */
export type RequestAdmission = (reply: FastifyReply, caller: RequestCaller) => Promise<void>;

/**
 * The IETF draft's headers (draft-ietf-httpapi-ratelimit-headers): the limit is the bucket's size,
 * the reset is when it is full again, and the policy says how fast it refills. Set one by one, in
 * lower case as Fastify keeps them, rather than through an object per request.
 */
export function createRateLimit({ limiter, defaultPolicy }: RateLimiting): RequestAdmission {
  const headersOf = policyHeadersCache();
  return async function rateLimit(reply, caller) {
    const policy = caller.rateLimit ?? defaultPolicy;
    const decision = await limiter.take(callerKey(caller), policy);
    const { window, limit, policy: policyHeader } = headersOf(policy);
    reply
      .header('ratelimit-limit', limit)
      .header('ratelimit-remaining', String(decision.remaining))
      .header('ratelimit-reset', String(decision.resetSeconds))
      .header('ratelimit-policy', policyHeader);
    if (!decision.allowed) {
      const { quota, unit } = window;
      throw requestFailure.rateLimited(quota, unit, policy.burst, decision.retryAfterSeconds);
    }
  };
}
