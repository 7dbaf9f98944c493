import { randomUUID } from 'node:crypto';
import { failure } from '../errors.js';
import type { JsonObject } from '../common.records.js';

/*
 * Rules of the embed-token lifecycle beyond expiry (docs/api.md#single-use-tokens, docs/api.md#refresh-within-a-session) that need
 * no storage: what a mint may ask for, when a token may refresh, and what the refreshed token carries.
 */

/**
 * The `ugs.session` claim of a refreshable token. Signed into the token, so the browser that holds it
 * can change none of it; the refresh needs no stored state to decide.
 */
export interface EmbedSessionClaim {
  /** Names the session for its rate limit; the same across every refresh. */
  id: string;
  /** When the session ends (NumericDate): no token of it expires later. */
  ends_at: number;
  /** The longest gap allowed between a token's issue (its `iat`) and its refresh; null: none but `exp`. */
  inactivity_seconds: number | null;
  /** The per-view properties the minter added: carried over by a refresh, the group's values taken anew. */
  view_keys: string[];
}

export interface LifecycleInput {
  singleUse?: boolean;
  sessionSeconds?: number;
  inactivitySeconds?: number;
}

/** Refuses what cannot go together: a single-use token with a session, an inactivity interval without one. */
export function assertLifecycleInput({ singleUse, sessionSeconds, inactivitySeconds }: LifecycleInput): void {
  if (singleUse === true && sessionSeconds !== undefined) throw failure.singleUseSession();
  if (inactivitySeconds !== undefined && sessionSeconds === undefined) throw failure.inactivityWithoutSession();
}

/** A new session starting at `issuedAt` (seconds), for the per-view keys `viewKeys`. */
export function newSession(
  issuedAt: number,
  sessionSeconds: number,
  inactivitySeconds: number | undefined,
  viewKeys: string[],
): EmbedSessionClaim {
  return {
    id: randomUUID(),
    ends_at: issuedAt + sessionSeconds,
    inactivity_seconds: inactivitySeconds ?? null,
    view_keys: viewKeys,
  };
}

/** A token's `exp`: its lifetime from `issuedAt`, never past its session's end. */
export function expiryWithin(issuedAt: number, lifetime: number, session: EmbedSessionClaim | undefined): number {
  const expiresAt = issuedAt + lifetime;
  return session === undefined ? expiresAt : Math.min(expiresAt, session.ends_at);
}

/** What refresh needs of a verified token's claims. */
export interface RefreshableClaims {
  iat: number;
  exp: number;
  session: EmbedSessionClaim | undefined;
}

/**
 * Whether a verified (hence live) token may refresh at `now` (seconds): it must belong to a session
 * that has not ended, and have been issued no longer than the inactivity interval ago — the token
 * presented is the previous refresh's, so its `iat` is when the session was last active.
 */
export function assertRefreshable({ iat, session }: RefreshableClaims, now: number): EmbedSessionClaim {
  if (session === undefined) throw failure.embedSessionEnded('no_session');
  if (now >= session.ends_at) throw failure.embedSessionEnded('ended');
  if (session.inactivity_seconds !== null && now - iat > session.inactivity_seconds)
    throw failure.embedSessionEnded('inactive');
  return session;
}

/**
 * Who may ask for a refresh, by the request's `Origin` (set by browsers, and by anything else at will):
 * a browser's page only from the token's pinned origin, and never for a token without one. A request
 * without `Origin` (a server) passes: Origin proves nothing outside a browser.
 */
export function assertRefreshOrigin(tokenOrigin: string | null, requestOrigin: string | undefined): void {
  if (requestOrigin === undefined) return;
  if (tokenOrigin === null) throw failure.refreshOrigin(false);
  if (requestOrigin !== tokenOrigin) throw failure.refreshOrigin(true);
}

/**
 * The per-view properties a refresh carries over: the session's view keys, from the token's values,
 * except a key the group (or an ancestor) now sets itself, whose owner's value wins.
 */
export function carriedViewProperties(
  tokenProperties: JsonObject,
  viewKeys: string[],
  inherited: JsonObject,
): JsonObject {
  const carried: JsonObject = {};
  for (const key of viewKeys) {
    if (Object.hasOwn(tokenProperties, key) && !Object.hasOwn(inherited, key)) carried[key] = tokenProperties[key]!;
  }
  return carried;
}

/** The lifetime a refreshed token gets: the one the session's tokens were minted with. */
export const refreshedLifetime = ({ iat, exp }: { iat: number; exp: number }): number => exp - iat;
