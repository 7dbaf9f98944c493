// The bucket arithmetic on a clock the test moves by hand: no sleeping, no timing.
import { describe, expect, it } from 'vitest';
import { createTokenBuckets, type RateLimitPolicy } from '../../src/rate-limit/token-bucket.js';

const FIVE_A_SECOND: RateLimitPolicy = { perSecond: 5, burst: 10 };

function bucketsOnAClock(maxBuckets?: number) {
  const clock = { ms: 1_000_000 };
  const take = createTokenBuckets(() => clock.ms, maxBuckets);
  const advance = (ms: number) => {
    clock.ms += ms;
  };
  return { take, advance, clock };
}

/** Takes `count` tokens and returns how many were allowed. */
function drain(
  take: ReturnType<typeof createTokenBuckets>,
  key: string,
  policy: RateLimitPolicy,
  count: number,
): number {
  let allowed = 0;
  for (let i = 0; i < count; i += 1) if (take(key, policy).allowed) allowed += 1;
  return allowed;
}

describe('a token bucket', () => {
  it('starts full: admits `burst` requests at once, counting down what remains, then refuses', () => {
    const { take } = bucketsOnAClock();
    const remaining = Array.from({ length: 10 }, () => take('a', FIVE_A_SECOND)).map((decision) => {
      expect(decision.allowed).toBe(true);
      return decision.remaining;
    });
    expect(remaining).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    expect(take('a', FIVE_A_SECOND)).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('tells a refused request when the next token comes (at least 1 s) and when the bucket is full again', () => {
    const { take } = bucketsOnAClock();
    drain(take, 'a', FIVE_A_SECOND, 10);
    // Next token in 0.2 s, rounded up to whole seconds; 10 tokens at 5 a second take 2 s.
    expect(take('a', FIVE_A_SECOND)).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 1, resetSeconds: 2 });
    const slow = { perSecond: 0.5, burst: 3 };
    drain(take, 'slow', slow, 3);
    expect(take('slow', slow)).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 2, resetSeconds: 6 });
  });

  it('reports a reset of 0 for a full bucket and the time to refill what was taken', () => {
    const { take, advance } = bucketsOnAClock();
    expect(take('a', FIVE_A_SECOND).resetSeconds).toBe(1); // one token out: 0.2 s, rounded up
    drain(take, 'a', FIVE_A_SECOND, 4);
    expect(take('a', FIVE_A_SECOND).resetSeconds).toBe(2); // six out: 1.2 s
    advance(60_000);
    const full = take('a', FIVE_A_SECOND);
    expect(full).toMatchObject({ allowed: true, remaining: 9, resetSeconds: 1 });
  });

  it('refills at `perSecond` and never beyond `burst`', () => {
    const { take, advance } = bucketsOnAClock();
    drain(take, 'a', FIVE_A_SECOND, 10);
    advance(199);
    expect(take('a', FIVE_A_SECOND).allowed).toBe(false);
    advance(1); // 0.2 s since the bucket ran dry: one token
    expect(take('a', FIVE_A_SECOND)).toMatchObject({ allowed: true, remaining: 0 });
    expect(take('a', FIVE_A_SECOND).allowed).toBe(false);
    advance(1_000); // five more
    expect(drain(take, 'a', FIVE_A_SECOND, 20)).toBe(5);
    advance(3_600_000); // an hour idle still fills it only to the burst
    expect(drain(take, 'a', FIVE_A_SECOND, 20)).toBe(10);
  });

  it('admits burst + rate × elapsed requests over any stretch of time, however they are spread', () => {
    const { take, advance } = bucketsOnAClock();
    let allowed = 0;
    // 10 s in steps of 37 ms, 3 requests a step: far more than the bucket admits.
    for (let step = 0; step < 270; step += 1) {
      allowed += drain(take, 'a', FIVE_A_SECOND, 3);
      advance(37);
    }
    const elapsedSeconds = (269 * 37) / 1000;
    expect(allowed).toBe(Math.floor(10 + 5 * elapsedSeconds));
  });

  it('keeps one bucket per key', () => {
    const { take } = bucketsOnAClock();
    drain(take, 'a', FIVE_A_SECOND, 10);
    expect(take('a', FIVE_A_SECOND).allowed).toBe(false);
    expect(take('b', FIVE_A_SECOND)).toMatchObject({ allowed: true, remaining: 9 });
  });

  it('applies a changed policy at once: a smaller burst caps what was saved, a larger one fills over time', () => {
    const { take, advance } = bucketsOnAClock();
    expect(take('a', FIVE_A_SECOND).remaining).toBe(9);
    const small = { perSecond: 1, burst: 2 };
    expect(take('a', small)).toMatchObject({ allowed: true, remaining: 1 });
    expect(take('a', small)).toMatchObject({ allowed: true, remaining: 0 });
    expect(take('a', small).allowed).toBe(false);
    const large = { perSecond: 100, burst: 1000 };
    expect(take('a', large).allowed).toBe(false); // no token appeared by raising the limit
    advance(1_000);
    expect(take('a', large)).toMatchObject({ allowed: true, remaining: 99 });
  });

  it('gains nothing when the clock steps back', () => {
    const { take, advance } = bucketsOnAClock();
    drain(take, 'a', FIVE_A_SECOND, 10);
    advance(-5_000);
    expect(take('a', FIVE_A_SECOND).allowed).toBe(false);
    advance(200); // measured from the latest reading, not from the older one
    expect(take('a', FIVE_A_SECOND).allowed).toBe(true);
  });

  it('keeps at most `maxBuckets`; a dropped bucket starts full again, as an idle one would be', () => {
    const { take } = bucketsOnAClock(2);
    drain(take, 'a', FIVE_A_SECOND, 10);
    drain(take, 'b', FIVE_A_SECOND, 10);
    expect(take('a', FIVE_A_SECOND).allowed).toBe(false);
    take('c', FIVE_A_SECOND); // 'b' is now the least recently used: dropped
    expect(take('a', FIVE_A_SECOND).allowed).toBe(false);
    expect(take('b', FIVE_A_SECOND)).toMatchObject({ allowed: true, remaining: 9 });
  });
});
