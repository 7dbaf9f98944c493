// The one retry policy: losing attempts run again until one wins, and nested loops share one budget.
import { describe, expect, it } from 'vitest';
import { LOST_TO_CONCURRENT_CHANGE, retryWhileContended } from '../../src/domain/retry-policy.js';

const givenUp = () => new Error('given up');

describe('retryWhileContended', () => {
  it('runs a losing attempt again until it wins, and returns what the winner returned', async () => {
    let rounds = 0;
    expect(
      await retryWhileContended(async () => (++rounds < 4 ? LOST_TO_CONCURRENT_CHANGE : 'won'), givenUp, 1000),
    ).toBe('won');
    expect(rounds).toBe(4);
  });

  it('gives up once the budget has passed, with the given error', async () => {
    const started = performance.now();
    await expect(retryWhileContended(async () => LOST_TO_CONCURRENT_CHANGE, givenUp, 100)).rejects.toThrow('given up');
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
  });

  it('lets a loop inside another spend only what is left of the outer budget, not a budget of its own', async () => {
    let outerRounds = 0;
    const innerGaveUpAt: number[] = [];
    const started = performance.now();
    const outer = retryWhileContended(
      async () => {
        outerRounds += 1;
        // The inner loop asks for far more than the outer one has: it gets the outer deadline.
        await retryWhileContended(async () => LOST_TO_CONCURRENT_CHANGE, givenUp, 60_000).catch(() =>
          innerGaveUpAt.push(performance.now() - started),
        );
        return LOST_TO_CONCURRENT_CHANGE;
      },
      givenUp,
      200,
    );
    await expect(outer).rejects.toThrow('given up');
    // The first inner loop ran to the outer deadline; the outer loop then gave up at once.
    expect(outerRounds).toBe(1);
    expect(innerGaveUpAt[0]).toBeGreaterThanOrEqual(200);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('gives separate operations separate budgets', async () => {
    await expect(retryWhileContended(async () => LOST_TO_CONCURRENT_CHANGE, givenUp, 50)).rejects.toThrow();
    let rounds = 0;
    expect(
      await retryWhileContended(async () => (++rounds < 3 ? LOST_TO_CONCURRENT_CHANGE : 'fresh'), givenUp, 50),
    ).toBe('fresh');
  });
});
