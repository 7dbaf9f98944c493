import { requestFailure } from '../wire/request-errors.js';

/** How many requests of a kind (streamed bodies) may be in flight at once, per API token and in the whole process. */
export interface InFlightLimits {
  perToken: number;
  perProcess: number;
}

/** When to try again after a refusal: a body in flight is answered within seconds. */
const RETRY_AFTER_SECONDS = 1;

/**
 * A count of the requests in flight, per API token and in all: `acquire` takes a place or throws
 * `429 in_flight_limit`; the function it returns gives the place back (once, however often called).
 */
export function createInFlightLimit(limits: InFlightLimits) {
  let total = 0;
  const perToken = new Map<string, number>();
  return {
    /** `callerKey` is per API token or per person (src/domain/console-sessions/oidc-session.records.ts). */
    acquire(callerKey: string): () => void {
      const held = perToken.get(callerKey) ?? 0;
      if (held >= limits.perToken) throw requestFailure.inFlightLimit('token', limits.perToken, RETRY_AFTER_SECONDS);
      if (total >= limits.perProcess)
        throw requestFailure.inFlightLimit('server', limits.perProcess, RETRY_AFTER_SECONDS);
      total += 1;
      perToken.set(callerKey, held + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total -= 1;
        const left = (perToken.get(callerKey) ?? 1) - 1;
        if (left === 0) perToken.delete(callerKey);
        else perToken.set(callerKey, left);
      };
    },
  };
}
