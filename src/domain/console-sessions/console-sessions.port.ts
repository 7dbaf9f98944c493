import type { ApiTokenRecord } from '../api-tokens/api-token.records.js';
import type { AuditContext } from '../audit/audit.records.js';
import type { ConsoleSessionRecord, NewConsoleSession } from './console-session.records.js';

/** A console session found by its hash, with the API token it acts as. */
export interface FoundConsoleSession {
  session: ConsoleSessionRecord;
  apiToken: ApiTokenRecord;
}

/**
 * Admin console sessions (docs/security.md#admin-console-sessions), in the database so that every instance knows them. Whether one
 * is still live is the domain's decision (src/domain/console-sessions/console-sessions.rules.ts); the store keeps the
 * times, and `expires_at` only to purge by.
 */
export interface ConsoleSessionStore {
  /** Writes the session with its `console_session.created` audit event, in one transaction. */
  insertConsoleSession(session: NewConsoleSession, audit: AuditContext): Promise<ConsoleSessionRecord>;
  /** The session with that hash while its API token is live; null otherwise (a revoked token ends its sessions at once). */
  findConsoleSession(idHash: string): Promise<FoundConsoleSession | null>;
  /** Records a use; bookkeeping, not a change: no audit event. */
  touchConsoleSession(id: number, lastSeenAt: string, expiresAt: string): Promise<void>;
  /** Deletes the session with its `console_session.ended` audit event; false when it was gone already. */
  deleteConsoleSession(id: number, audit: AuditContext): Promise<boolean>;
  /** Deletes at most `limit` sessions whose `expires_at` is at or before `expiredBy`; returns how many went. */
  purgeConsoleSessions(expiredBy: string, limit: number): Promise<number>;
}
