import type { AuditEntry } from '../audit/audit-entry.js';
import type { Timestamp } from '../common.records.js';
import type { ConsoleSessionRecord } from './console-session.records.js';
import type { Environment } from '../tenancy.js';

/*
 * When an admin console session ends (idle expiry 1 h, absolute 8 h), and what signing in
 * and out write into the audit trail. Pure: the service and the stores apply them.
 */

export const CONSOLE_SESSION_IDLE_MS = 60 * 60 * 1000;
export const CONSOLE_SESSION_ABSOLUTE_MS = 8 * 60 * 60 * 1000;

/**
 * A session's use is recorded at most once a minute, as an API token's last_used_at is: a console
 * that polls writes once a minute, not once a request. So the idle hour runs from the last recorded
 * use, up to a minute earlier than the last request.
 */
export const CONSOLE_SESSION_TOUCH_MS = 60 * 1000;

const plus = (at: Timestamp, ms: number) => new Date(Date.parse(at) + ms).toISOString();

/** When a session created at `createdAt` and last used at `lastSeenAt` ends unless used again. */
export function consoleSessionExpiry(createdAt: Timestamp, lastSeenAt: Timestamp): Timestamp {
  const absolute = Date.parse(createdAt) + CONSOLE_SESSION_ABSOLUTE_MS;
  const idle = Date.parse(lastSeenAt) + CONSOLE_SESSION_IDLE_MS;
  return new Date(Math.min(absolute, idle)).toISOString();
}

/** When the session ends at the latest, however much it is used. */
export function consoleSessionAbsoluteExpiry(session: Pick<ConsoleSessionRecord, 'createdAt'>): Timestamp {
  return plus(session.createdAt, CONSOLE_SESSION_ABSOLUTE_MS);
}

/** Whether the session may still be used at `now`: idle for less than an hour, and younger than eight. */
export function isConsoleSessionLive(
  session: Pick<ConsoleSessionRecord, 'createdAt' | 'lastSeenAt'>,
  now: Timestamp,
): boolean {
  return Date.parse(now) < Date.parse(consoleSessionExpiry(session.createdAt, session.lastSeenAt));
}

/** The use to record for a live session used at `now`, or null when the last recorded one is recent enough. */
export function consoleSessionTouch(
  session: ConsoleSessionRecord,
  now: Timestamp,
): { lastSeenAt: Timestamp; expiresAt: Timestamp } | null {
  if (Date.parse(now) - Date.parse(session.lastSeenAt) < CONSOLE_SESSION_TOUCH_MS) return null;
  return { lastSeenAt: now, expiresAt: consoleSessionExpiry(session.createdAt, now) };
}

/** The tenant of the API token a session acts as: its audit events belong there. */
export interface ConsoleSessionTenant {
  sessionId: number;
  workspaceId: number;
  environment: Environment;
}

export function consoleSessionStarted({ sessionId, workspaceId, environment }: ConsoleSessionTenant): AuditEntry {
  return {
    action: 'console_session.created',
    workspaceId,
    environment,
    changes: { session_id: { before: null, after: sessionId } },
  };
}

export function consoleSessionEnded({ sessionId, workspaceId, environment }: ConsoleSessionTenant): AuditEntry {
  return {
    action: 'console_session.ended',
    workspaceId,
    environment,
    changes: { session_id: { before: sessionId, after: null } },
  };
}
