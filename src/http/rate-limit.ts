import { requestFailure } from '../wire/request-errors.js';
import type { FastifyReply } from 'fastify';
import type { ApiTokenCaller } from '../domain/api-tokens.service.js';
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

/**
 * The IETF draft's headers (draft-ietf-httpapi-ratelimit-headers): the limit is the bucket's size,
 * the reset is when it is full again, and the policy says how fast it refills.
 */
interface PolicyHeaders {
  window: ReturnType<typeof quotaPerWindow>;
  limit: string;
  policy: string;
}

function policyHeadersOf(policy: RateLimitPolicy): PolicyHeaders {
  const window = quotaPerWindow(policy.perSecond);
  return { window, limit: String(policy.burst), policy: `${window.quota};w=${window.seconds};burst=${policy.burst}` };
}

const KNOWN_POLICIES = 1000;

/** Takes a token from the caller's bucket and sets the RateLimit headers; throws rate_limited when it is empty. */
export type RequestAdmission = (reply: FastifyReply, caller: ApiTokenCaller) => Promise<void>;

export function createRateLimit({ limiter, defaultPolicy }: RateLimiting): RequestAdmission {
  // What a policy's headers say but for the remaining count, worked out once per distinct policy (the
  // default, and the tokens' own limits) rather than on every request; a handful in practice, and
  // never more than KNOWN_POLICIES.
  const known = new Map<string, PolicyHeaders>();
  return async function rateLimit(reply, caller) {
    const policy = caller.rateLimit ?? defaultPolicy;
    const decision = await limiter.take(String(caller.actor.apiTokenId), policy);
    const key = `${policy.perSecond}/${policy.burst}`;
    let headers = known.get(key);
    if (!headers) {
      if (known.size >= KNOWN_POLICIES) known.clear();
      known.set(key, (headers = policyHeadersOf(policy)));
    }
    reply.header('RateLimit-Limit', headers.limit);
    reply.header('RateLimit-Remaining', String(decision.remaining));
    reply.header('RateLimit-Reset', String(decision.resetSeconds));
    reply.header('RateLimit-Policy', headers.policy);
    if (!decision.allowed) {
      const { quota, unit } = headers.window;
      throw requestFailure.rateLimited(quota, unit, policy.burst, decision.retryAfterSeconds);
    }
  };
}
