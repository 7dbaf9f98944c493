import type { RateLimit } from './api-token.records.js';

/** An API token's state as a statement read it, in that statement's own snapshot. */
export interface ApiTokenState {
  live: boolean;
  rateLimit: RateLimit | null;
}

/**
 * A caller whose API token this process remembered instead of reading it (the two hot reads, issue
 * 15): the operation's first statement reads the token's state beside the group, in the same round
 * trip, and settles the check; the request is admitted (its rate limit taken) only then. A request
 * that ends before any such statement (a refusal, a malformed token) settles it by a read of its own,
 * so a revoked token is still refused on the very next request, by every instance, and never gets
 * an answer other than 401.
 */
export interface ApiTokenCheck {
  readonly apiTokenId: number;
  /** The token's lookup key (SHA-256 of the secret), for an engine that confirms it by hash. */
  readonly apiTokenHash: string;
  readonly settled: boolean;
  readonly admitted: boolean;
  /** Records what a statement read; throws invalid_api_token when the token is no longer live. */
  settle(state: ApiTokenState | null): void;
  /** Settles (by a read of its own if no statement has) and admits the request, once; throws its refusal. */
  admit(): Promise<void>;
}
