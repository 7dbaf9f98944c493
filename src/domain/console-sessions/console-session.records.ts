import type { ApiTokenRecord } from '../api-tokens/api-token.records.js';
import type { Timestamp } from '../common.records.js';

/**
 * A signed-in admin console (docs/security.md#admin-console-sessions): it acts as its API token. Only the SHA-256 of the session's
 * secret (the cookie's value) is stored. `expiresAt` is when it ends unless used again: the earlier of
 * its absolute and its idle expiry (src/domain/console-sessions/console-sessions.rules.ts).
 */
export interface ConsoleSessionRecord {
  id: number;
  apiTokenId: number;
  createdAt: Timestamp;
  lastSeenAt: Timestamp;
  expiresAt: Timestamp;
}

export interface NewConsoleSession {
  idHash: string;
  apiToken: Pick<ApiTokenRecord, 'id' | 'workspaceId' | 'environment'>;
  createdAt: Timestamp;
  expiresAt: Timestamp;
}
