import { decodeJwt } from 'jose';
import { UgsError } from './errors.js';
import { answerOf } from './transport.js';

/*
 * Refresh within a session (docs/api.md#refresh-within-a-session): a page that holds an embed token minted with session_seconds
 * swaps it for a fresh one before it expires, with no API token and no backend of its own involved.
 * Works in browsers (the package's browser build) and in Node.
 */

/** What POST /api/user/embed_token/refresh answers. */
export interface RefreshedEmbedToken {
  embed_token: string;
  expires_at: string;
  session_ends_at: string;
}

export interface RefreshEmbedTokenOptions {
  /** The service's base URL, e.g. https://ugs.example.com. */
  baseUrl: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

/**
 * One refresh: the live token of a session in, a fresh token of the same session out (the group's
 * values and rules as they are now, a new exp). Throws UgsError: 401 `invalid_embed_token` (expired,
 * revoked), 401 `embed_session_ended`, 403 `origin_not_allowed` (from a page of another origin than the
 * token's), 429 `rate_limited`. Sends no credential but the token: no cookie, no API token.
 */
export async function refreshEmbedToken(
  token: string,
  options: RefreshEmbedTokenOptions,
): Promise<RefreshedEmbedToken> {
  const doFetch = options.fetch ?? fetch;
  const url = `${options.baseUrl.replace(/\/+$/, '')}/api/user/embed_token/refresh`;
  let response: Response;
  try {
    response = await doFetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ token }),
      credentials: 'omit',
    });
  } catch (error) {
    throw new UgsError(
      0,
      'network_error',
      `No answer from ${new URL(url).origin}: ${(error as Error).message}`,
      undefined,
      undefined,
      {
        cause: error,
      },
    );
  }
  const { embed_token, expires_at, session_ends_at } = await answerOf<RefreshedEmbedToken & { success: 1 }>(response);
  return { embed_token, expires_at, session_ends_at };
}

export interface EmbedTokenKeeperOptions extends RefreshEmbedTokenOptions {
  /** The token the page starts with. */
  token: string;
  /** Called with each fresh token: give it to whatever renders the dashboard. */
  onToken: (token: string, refreshed: RefreshedEmbedToken) => void;
  /**
   * Called once when no fresh token can come (the session ended or was revoked, another origin, the
   * token expired while refreshes failed): the page should ask its backend for a new token.
   */
  onEnd?: (error: unknown) => void;
  /** How long before the token's exp (or its inactivity deadline) to refresh, in seconds (default: a fifth of its lifetime, at most 60). */
  marginSeconds?: number;
}

export interface EmbedTokenKeeper {
  /** The latest token. */
  current(): string;
  /** Stops refreshing. */
  stop(): void;
}

interface SessionClaims {
  iat?: number;
  exp?: number;
  ugs?: { session?: { ends_at?: number; inactivity_seconds?: number | null } };
}

/**
 * Keeps a session's token fresh: refreshes it before it expires (and before its inactivity interval
 * passes), each fresh token to `onToken`, until the session ends (then `onEnd`). A refusal that a wait
 * can cure (429, a network failure) is tried again while the token is still live. The token's claims
 * are read only to schedule: the service checks them.
 */
export function keepEmbedTokenFresh(options: EmbedTokenKeeperOptions): EmbedTokenKeeper {
  let token = options.token;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  const end = (error: unknown) => {
    if (stopped) return;
    stopped = true;
    options.onEnd?.(error);
  };

  const schedule = (delayMs: number) => {
    if (stopped) return;
    timer = setTimeout(() => void refresh(), Math.max(0, delayMs));
  };

  function nextRefreshMs(): number | undefined {
    const claims = decodeJwt(token) as SessionClaims;
    const { iat = 0, exp = 0 } = claims;
    const session = claims.ugs?.session;
    if (!session || typeof session.ends_at !== 'number') return undefined;
    const inactivity = session.inactivity_seconds;
    const deadline = Math.min(exp, typeof inactivity === 'number' ? iat + inactivity : exp);
    // Nothing to gain once the session ends no later than the token does: no later token can exist.
    if (session.ends_at <= exp) return undefined;
    const margin = options.marginSeconds ?? Math.min(60, Math.max(1, (exp - iat) / 5));
    return (deadline - margin) * 1000 - Date.now();
  }

  async function refresh(): Promise<void> {
    if (stopped) return;
    try {
      const refreshed = await refreshEmbedToken(token, options);
      if (stopped) return;
      token = refreshed.embed_token;
      options.onToken(token, refreshed);
      start();
    } catch (error) {
      const exp = ((decodeJwt(token) as SessionClaims).exp ?? 0) * 1000;
      const curable = error instanceof UgsError && (error.status === 0 || error.status === 429 || error.status >= 500);
      // Try again in a few seconds while the token is still live; otherwise the session is over for this page.
      if (curable && Date.now() + 5000 < exp) schedule(5000);
      else end(error);
    }
  }

  function start(): void {
    let delay: number | undefined;
    try {
      delay = nextRefreshMs();
    } catch (error) {
      end(error);
      return;
    }
    if (delay === undefined) end(new Error('The embed token has no session left to refresh within.'));
    else schedule(delay);
  }

  start();
  return {
    current: () => token,
    stop: () => {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
