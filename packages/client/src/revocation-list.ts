/*
 * An issuer's embed-token revocations as an offline verifier holds them (docs/api.md, "Revoking embed
 * tokens"): fetched from `<issuer>/.well-known/revocations.json` at most once per staleness bound,
 * merged into what was held (entries leave only when every token they could match has expired, by
 * this process's clock: a copy that lacks an entry never removes it), and refusing every token while
 * the copy is older than the bound and cannot be refreshed (fails closed).
 */

export interface RevocationCheckOptions {
  /**
   * The staleness bound (default 60 000 ms): a revocation committed at time T is refused by this
   * verifier from T + maxAgeMs (plus one fetch) on; the document is fetched at most once per bound,
   * and tokens are refused while the copy held is older than it and a refresh fails.
   */
  maxAgeMs?: number;
  /** The least time between two fetches after a failed one (default: 5 s, or the bound if shorter). */
  retryMs?: number;
  /** How long one fetch may take (default 10 s). */
  timeoutMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof globalThis.fetch;
}

/** The token was revoked: its group's tokens up to its generation, or the token itself. */
export class EmbedTokenRevokedError extends Error {
  override readonly name = 'EmbedTokenRevokedError';
}

/** The revocation document could not be refreshed past the staleness bound: no token is accepted meanwhile. */
export class RevocationsUnavailableError extends Error {
  override readonly name = 'RevocationsUnavailableError';
}

/** What an embed token carries that revocations match. */
export interface RevocableClaims {
  jti?: string;
  grp?: unknown;
  gen?: unknown;
}

const DEFAULT_MAX_AGE_MS = 60_000;
const isEntry = (value: unknown, length: number): value is unknown[] => Array.isArray(value) && value.length === length;

export function createRevocationList(issuer: string, options: RevocationCheckOptions) {
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
  if (!(maxAgeMs > 0) || !Number.isFinite(maxAgeMs))
    throw new TypeError(`revocations.maxAgeMs must be a positive number of milliseconds, got ${String(maxAgeMs)}.`);
  const retryMs = options.retryMs ?? Math.min(5_000, maxAgeMs);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const url = `${issuer}/.well-known/revocations.json`;
  const fetchOf = () => options.fetch ?? globalThis.fetch;

  /** grp → [before_generation, expires_at (s)]; jti → expires_at (s). */
  const groups = new Map<string, [number, number]>();
  const tokens = new Map<string, number>();
  /** When the request of the last successful fetch was sent: the copy is at least this recent. */
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let failedAt = Number.NEGATIVE_INFINITY;
  let failure: unknown;
  let etag: string | undefined;
  let refreshing: Promise<void> | undefined;

  function merge(document: unknown): void {
    if (typeof document !== 'object' || document === null) throw new TypeError('not a revocation document');
    const { issuer: named, groups: groupEntries, tokens: tokenEntries } = document as Record<string, unknown>;
    if (named !== issuer) throw new TypeError(`the revocation document is ${String(named)}'s, not ${issuer}'s`);
    if (!Array.isArray(groupEntries) || !Array.isArray(tokenEntries)) throw new TypeError('not a revocation document');
    for (const entry of groupEntries) {
      if (!isEntry(entry, 3)) continue;
      const [grp, before, expires] = entry;
      if (typeof grp !== 'string' || typeof before !== 'number' || typeof expires !== 'number') continue;
      const known = groups.get(grp);
      if (!known) groups.set(grp, [before, expires]);
      else {
        // Cumulative: the wider bound and the later expiry of the two copies.
        known[0] = Math.max(known[0], before);
        known[1] = Math.max(known[1], expires);
      }
    }
    for (const entry of tokenEntries) {
      if (!isEntry(entry, 2)) continue;
      const [jti, expires] = entry;
      if (typeof jti !== 'string' || typeof expires !== 'number') continue;
      tokens.set(jti, Math.max(tokens.get(jti) ?? 0, expires));
    }
    // Entries whose every token has expired leave: the memory stays bounded by the document's.
    const now = Date.now() / 1000;
    for (const [grp, [, expires]] of groups) if (expires <= now) groups.delete(grp);
    for (const [jti, expires] of tokens) if (expires <= now) tokens.delete(jti);
  }

  async function refresh(): Promise<void> {
    const sentAt = Date.now();
    try {
      const response = await fetchOf()(url, {
        // Past any HTTP cache between here and the service: the bound is this verifier's to keep.
        headers: { 'cache-control': 'no-cache', ...(etag === undefined ? {} : { 'if-none-match': etag }) },
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (response.status === 304 && etag !== undefined) {
        await response.body?.cancel();
      } else if (response.status === 200) {
        merge(await response.json());
        etag = response.headers.get('etag') ?? undefined;
      } else {
        await response.body?.cancel();
        throw new Error(`GET ${url} answered ${response.status}`);
      }
      fetchedAt = Math.max(fetchedAt, sentAt);
    } catch (error) {
      failedAt = Date.now();
      failure = error;
      throw error;
    }
  }

  function refused(claims: RevocableClaims): void {
    const { grp, gen, jti } = claims;
    if (typeof grp === 'string' && typeof gen === 'number') {
      const entry = groups.get(grp);
      if (entry !== undefined && gen < entry[0])
        throw new EmbedTokenRevokedError("The embed token's group revoked it.");
    }
    if (jti !== undefined && tokens.has(jti)) throw new EmbedTokenRevokedError('The embed token was revoked.');
  }

  async function refreshedThenChecked(claims: RevocableClaims): Promise<void> {
    if (Date.now() - failedAt < retryMs)
      throw new RevocationsUnavailableError(`The revocations of ${issuer} are out of date and could not be fetched.`, {
        cause: failure,
      });
    refreshing ??= refresh().finally(() => {
      refreshing = undefined;
    });
    try {
      await refreshing;
    } catch (error) {
      throw new RevocationsUnavailableError(`The revocations of ${issuer} are out of date and could not be fetched.`, {
        cause: error,
      });
    }
    refused(claims);
  }

  return {
    /** Throws (or rejects) when the token is revoked or the copy is past the bound and cannot be refreshed. */
    check(claims: RevocableClaims): Promise<void> | undefined {
      if (Date.now() - fetchedAt < maxAgeMs) {
        refused(claims);
        return undefined;
      }
      return refreshedThenChecked(claims);
    },
    /** How many entries are held: for measuring. */
    size: () => ({ groups: groups.size, tokens: tokens.size }),
  };
}
