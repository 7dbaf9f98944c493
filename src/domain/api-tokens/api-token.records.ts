import type { Timestamp } from '../common.records.js';
import type { Environment, Scope } from '../tenancy.js';

/** An API token's own rate limit: a bucket of `burst` requests that refills `perSecond` a second. */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

export interface ApiTokenRecord {
  id: number;
  workspaceId: number;
  environment: Environment;
  name: string;
  scope: Scope;
  /** Null: the server's default limit applies. */
  rateLimit: RateLimit | null;
  createdAt: Timestamp;
  lastUsedAt: Timestamp | null;
  revokedAt: Timestamp | null;
}

export interface NewApiToken {
  workspaceId: number;
  environment: Environment;
  name: string;
  scope: Scope;
  /** Absent or null: the server's default limit applies. */
  rateLimit?: RateLimit | null;
  tokenHash: string;
  createdAt: Timestamp;
}
