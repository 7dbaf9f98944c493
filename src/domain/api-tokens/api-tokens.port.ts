import type { AuditContext } from '../audit/audit.records.js';
import type { ApiTokenRecord, NewApiToken, RateLimit } from './api-token.records.js';

export interface ApiTokenStore {
  insertApiToken(token: NewApiToken, audit: AuditContext): Promise<ApiTokenRecord>;
  /**
   * Inserts all `tokens` (one workspace) only if that workspace has no API token at all, revoked or
   * not; returns null when it already had one. Safe against concurrent first starts.
   */
  insertApiTokensIfWorkspaceHasNone(
    workspaceId: number,
    tokens: NewApiToken[],
    audit: AuditContext,
  ): Promise<ApiTokenRecord[] | null>;
  /** Only live (not revoked) tokens are found. */
  findApiTokenByHash(tokenHash: string): Promise<ApiTokenRecord | null>;
  /** Live tokens only, in id order. */
  listApiTokens(workspaceId: number): Promise<ApiTokenRecord[]>;
  /**
   * Sets the token's own rate limit (null: back to the server's default) with an `api_token.updated`
   * audit event holding the before and after values, read inside the same transaction; setting the
   * value it has already writes nothing. Null when no live token with that id is in the workspace.
   */
  updateApiTokenRateLimit(
    workspaceId: number,
    id: number,
    rateLimit: RateLimit | null,
    audit: AuditContext,
  ): Promise<ApiTokenRecord | null>;
  /** Returns the revoked token, or null when no live token with that id is in the workspace. */
  revokeApiToken(workspaceId: number, id: number, audit: AuditContext): Promise<ApiTokenRecord | null>;
  /** Bookkeeping, not a change: writes no audit event. */
  recordApiTokenUse(id: number, at: string): Promise<void>;
}
