/** One consumption of a single-use embed token (docs/api.md#single-use-tokens). */
export interface EmbedTokenConsumption {
  workspaceId: number;
  /** The token's `jti`: unique across every token the service mints. */
  jti: string;
  /**
   * Who consumed it: a hash of the API token and the request's Idempotency-Key, so that the same
   * caller retrying with the same key is told apart from everyone else; null without a key.
   */
  consumer: string | null;
  consumedAt: string;
  /** The token's own expiry: the record is needed no longer, since the token is refused after it anyway. */
  expiresAt: string;
}

/** Outcome of a consumption: first (ours), or already consumed, by the consumer named. */
export type EmbedTokenConsumptionResult = { consumed: true } | { consumed: false; consumer: string | null };

/** The consumed single-use tokens: exactly once across every instance sharing the database. */
export interface EmbedTokenConsumptionStore {
  /**
   * Records the token consumed unless a record of it exists (insert-if-absent, settled by the
   * database's unique key: of concurrent consumptions of one token, on any instance, exactly one
   * wins); otherwise answers who holds the existing record.
   */
  consumeEmbedToken(consumption: EmbedTokenConsumption): Promise<EmbedTokenConsumptionResult>;
  /** Deletes at most `limit` records of tokens that expired at or before `expiredBefore`; returns how many went. */
  purgeConsumedEmbedTokens(expiredBefore: string, limit: number): Promise<number>;
}
