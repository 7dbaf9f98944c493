import { createHmac, timingSafeEqual } from 'node:crypto';
import { apiTokenCaller, isApiTokenShaped, type ApiTokenCaller } from '../api-tokens/api-token-admission.js';
import { auditContextOf } from '../audit/audit-context.js';
import type { Clock } from '../clock.js';
import {
  consoleSessionAbsoluteExpiry,
  consoleSessionExpiry,
  consoleSessionTouch,
  isConsoleSessionLive,
} from './console-sessions.rules.js';
import { failure } from '../errors.js';
import type { ConsoleSessionRecord } from './console-session.records.js';
import { requireScope } from '../api-tokens/scopes.js';
import { generateConsoleSessionSecret, hashSecret, isConsoleSessionSecretShaped } from '../secrets.js';
import type { ApiTokenStore } from '../api-tokens/api-tokens.port.js';
import type { ConsoleSessionStore } from './console-sessions.port.js';

/** A live console session as a request sees it: who it acts as, and its times. */
export interface ConsoleSession {
  caller: ApiTokenCaller;
  record: ConsoleSessionRecord;
  /** Proves a request comes from the console's own page (the synchronizer token of OWASP's CSRF advice). */
  csrfToken: string;
  /** When it ends at the latest, however much it is used. */
  absoluteExpiresAt: string;
}

/** Expired sessions deleted per sign-in: sign-ins keep the table bounded by the sessions of the last 8 h. */
const PURGE_BATCH = 1000;

/**
 * The CSRF token is derived from the session's secret (an HMAC under it), so it needs no storage and
 * is the same on every instance; it reveals nothing of the secret, and the database (which holds only
 * the secret's SHA-256) cannot produce it.
 */
function csrfTokenOf(secret: string): string {
  return createHmac('sha256', secret).update('ugs console csrf').digest('base64url');
}

export type ConsoleSessionService = ReturnType<typeof createConsoleSessionService>;

/** Admin console sessions (docs/security.md#admin-console-sessions): an admin API token exchanged for a session that acts as it. */
export function createConsoleSessionService({
  store,
  clock,
}: {
  store: ConsoleSessionStore & Pick<ApiTokenStore, 'findApiTokenByHash'>;
  clock: Clock;
}) {
  const sessionOf = (secret: string, caller: ApiTokenCaller, record: ConsoleSessionRecord): ConsoleSession => ({
    caller,
    record,
    csrfToken: csrfTokenOf(secret),
    absoluteExpiresAt: consoleSessionAbsoluteExpiry(record),
  });

  return {
    /** Starts a session for a live admin API token; returns it with its secret, which exists only in this value. */
    async signIn(apiTokenSecret: string, requestId: string | null): Promise<ConsoleSession & { secret: string }> {
      const token = isApiTokenShaped(apiTokenSecret)
        ? await store.findApiTokenByHash(hashSecret(apiTokenSecret))
        : null;
      if (!token) throw failure.invalidApiToken();
      const caller = apiTokenCaller(token, requestId);
      requireScope(caller, 'admin');
      const secret = generateConsoleSessionSecret();
      const now = clock();
      // Bookkeeping must not fail a sign-in: a purge that fails is done by the next one.
      await store.purgeConsoleSessions(now, PURGE_BATCH).catch(() => undefined);
      const record = await store.insertConsoleSession(
        { idHash: hashSecret(secret), apiToken: token, createdAt: now, expiresAt: consoleSessionExpiry(now, now) },
        { at: now, actor: caller.actor, requestId },
      );
      return { ...sessionOf(secret, caller, record), secret };
    },

    /** The live session a cookie names; `consoleSessionEnded` for any other (unknown, expired, signed out, token revoked). */
    async authenticate(secret: string, requestId: string | null): Promise<ConsoleSession> {
      const found = isConsoleSessionSecretShaped(secret) ? await store.findConsoleSession(hashSecret(secret)) : null;
      const now = clock();
      if (!found || !isConsoleSessionLive(found.session, now)) throw failure.consoleSessionEnded();
      const touch = consoleSessionTouch(found.session, now);
      if (touch) {
        // Awaited (once a minute per session), so that the next request, on any instance, sees the use;
        // a failure only means the next request records it: bookkeeping must never fail a request.
        await store.touchConsoleSession(found.session.id, touch.lastSeenAt, touch.expiresAt).catch(() => undefined);
      }
      return sessionOf(secret, apiTokenCaller(found.apiToken, requestId), { ...found.session, ...touch });
    },

    /** Whether `presented` is the CSRF token of the session whose secret is `secret` (in constant time). */
    isCsrfTokenOf(secret: string, presented: string | undefined): boolean {
      if (presented === undefined) return false;
      const expected = Buffer.from(csrfTokenOf(secret));
      const given = Buffer.from(presented);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },

    /** Ends the session at once, audited; signing out twice is signing out once. */
    async signOut(session: ConsoleSession): Promise<void> {
      await store.deleteConsoleSession(session.record.id, auditContextOf(clock, session.caller));
    },
  };
}
