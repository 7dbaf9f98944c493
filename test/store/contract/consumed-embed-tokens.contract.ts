import { describe, expect, it } from 'vitest';
import type { EmbedTokenConsumption } from '../../../src/domain/embed-tokens/embed-token-consumption.port.js';
import { T0, T1, T2 } from '../store-fixtures.js';
import type { ContractContext } from './context.js';

export function describeConsumedEmbedTokenContract(t: ContractContext): void {
  describe('consumed embed tokens (single use)', () => {
    const consumption = (overrides: Partial<EmbedTokenConsumption> = {}): EmbedTokenConsumption => ({
      workspaceId: t.fx.workspace.id,
      jti: '0.7d1f5a52-0000-4000-8000-000000000001',
      consumer: 'consumer-a',
      consumedAt: T0,
      expiresAt: T1,
      ...overrides,
    });

    it('records a token once: a later consumption is told who holds it', async () => {
      expect(await t.store.consumeEmbedToken(consumption())).toEqual({ consumed: true });
      expect(await t.store.consumeEmbedToken(consumption({ consumer: 'consumer-b' }))).toEqual({
        consumed: false,
        consumer: 'consumer-a',
      });
      expect(await t.store.consumeEmbedToken(consumption({ consumer: null }))).toEqual({
        consumed: false,
        consumer: 'consumer-a',
      });
      // Another jti, or the same jti in another workspace, is another token.
      expect(await t.store.consumeEmbedToken(consumption({ jti: '0.other' }))).toEqual({ consumed: true });
      expect(await t.store.consumeEmbedToken(consumption({ workspaceId: t.fx.otherWorkspace.id }))).toEqual({
        consumed: true,
      });
    });

    it('keeps a consumption without a consumer as held by none', async () => {
      expect(await t.store.consumeEmbedToken(consumption({ consumer: null }))).toEqual({ consumed: true });
      expect(await t.store.consumeEmbedToken(consumption())).toEqual({ consumed: false, consumer: null });
    });

    it('lets exactly one of concurrent consumptions of one token win', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, index) => t.store.consumeEmbedToken(consumption({ consumer: `c-${index}` }))),
      );
      const winners = results.filter((result) => result.consumed);
      expect(winners).toHaveLength(1);
      const holders = new Set(results.map((result) => (result.consumed ? null : result.consumer)));
      holders.delete(null);
      expect(holders.size).toBe(1);
    });

    it('purges only records of tokens expired by then, at most the limit at a time', async () => {
      for (const [jti, expiresAt] of [
        ['0.a', T0],
        ['0.b', T0],
        ['0.c', T1],
        ['0.d', T2],
      ] as const)
        await t.store.consumeEmbedToken(consumption({ jti, expiresAt }));
      expect(await t.store.purgeConsumedEmbedTokens(T1, 2)).toBe(2);
      expect(await t.store.purgeConsumedEmbedTokens(T1, 2)).toBe(1);
      expect(await t.store.purgeConsumedEmbedTokens(T1, 2)).toBe(0);
      // Purged: a token of that jti (were it still live) would be consumed afresh; the unexpired one is still held.
      expect(await t.store.consumeEmbedToken(consumption({ jti: '0.a' }))).toEqual({ consumed: true });
      expect(await t.store.consumeEmbedToken(consumption({ jti: '0.d', consumer: 'x' }))).toEqual({
        consumed: false,
        consumer: 'consumer-a',
      });
    });
  });
}
