import { createRemoteJWKSet, customFetch, errors, type JWTPayload } from 'jose';
import type { ResolvedAccessRule } from '../../../src/wire/access-rules.schemas.js';
import { base64urlBytes, base64urlText, prepareEs256Verifier, type Es256Verifier } from '#crypto';
import { createRevocationList, type RevocationCheckOptions } from './revocation-list.js';

export interface EmbedTokenVerifierOptions {
  /**
   * The issuer of the environment this renderer serves: `<public URL>/w/<workspace>` (Customer) or
   * `<public URL>/w/<workspace>/testing` (Testing); its JWKS is `<issuer>/.well-known/jwks.json`. A token
   * of the other environment never verifies under it.
   */
  issuer: string;
  /** The embed_id(s) this renderer serves (`ugs-embed` for tokens minted without one). */
  audience: string | string[];
  /**
   * How long fetched keys are trusted before they are fetched again (default: 10 min). Also how late a
   * key's removal from the JWKS (and so the refusal of its tokens, verified before or not) may be seen.
   */
  cacheMaxAgeMs?: number;
  /** The least time between two fetches prompted by an unknown kid (default 30 s, jose's). */
  cooldownMs?: number;
  /**
   * Accept a token minted without an `origin` when `verify` is given the page's origin (default: such a
   * token is refused, so that the renderer, not whoever mints, decides whether origins are pinned).
   */
  allowMissingOrigin?: boolean;
  /**
   * How many tokens whose signature verified are remembered, most recently used kept (default 1000;
   * 0: none). A remembered token skips the signature check when presented again, never the checks of
   * issuer, audience, origin, `exp` and `nbf`, and is forgotten when its key leaves the JWKS.
   */
  tokenCacheSize?: number;
  /**
   * Accept single-use tokens (`ugs.single_use`), because the caller introspects each one (or verifies
   * it online), which consumes it. Default: refused, since an offline check cannot consume a token and
   * would accept it any number of times.
   */
  introspectsSingleUse?: boolean;
  /**
   * Check the issuer's revocation document (`<issuer>/.well-known/revocations.json`) too: `true` for
   * the default staleness bound (60 s), or its options. A token revoked (its group's token rotated, the
   * group deleted, or revoked explicitly) is refused with EmbedTokenRevokedError within the bound; while
   * the document is older than the bound and cannot be fetched, every token is refused with
   * RevocationsUnavailableError (fails closed). Off by default.
   */
  revocations?: boolean | RevocationCheckOptions;
  /**
   * The fetch the JWKS (and the revocation document, unless `revocations.fetch` says otherwise) is
   * fetched with (default: the global one): for a proxy, or to reach an instance directly.
   */
  fetch?: typeof globalThis.fetch;
}

/** What one call checks besides the token itself. */
export interface EmbedTokenCheck {
  /** The origin of the page the dashboard is rendered for; pinned tokens must name it. */
  origin?: string;
  /** The embed_id(s) this call serves, instead of the verifier's `audience`. */
  audience?: string | string[];
  /** The time to check `exp` and `nbf` at (default: now). */
  currentDate?: Date;
}

/** What an embed token carries about its group (docs/api.md#embed-tokens). */
export interface EmbedClaims extends JWTPayload {
  sub: string;
  /** The group's name in the issuer's revocation document (absent from tokens minted before revocation existed). */
  grp?: string;
  /** The group's token generation at minting: a group entry revokes the tokens below its bound. */
  gen?: number;
  ugs: {
    team_id: number;
    environment: 'Customer' | 'Testing';
    workspace: string;
    properties: Record<string, unknown>;
    mapping: Record<string, string>;
    is_demo_group: boolean;
    origin: string | null;
    /**
     * The group's effective access rules, property references resolved (docs/api.md#access-rules): give them to
     * accessRulesToSql. Absent from tokens minted by a service that predates them: pass `?? []`,
     * which denies every table not opted out with `unlisted: 'allow'`.
     */
    access_rules?: ResolvedAccessRule[];
    /** A single-use token: only an introspection (or online verify) may accept it, once. */
    single_use?: true;
    /** A refreshable token's session (see keepEmbedTokenFresh). */
    session?: { id: string; ends_at: number; inactivity_seconds: number | null; view_keys: string[] };
  };
}

/** The token was not minted for the origin the renderer was asked to check. */
export class EmbedOriginError extends Error {
  override readonly name = 'EmbedOriginError';
}

/** A single-use token offered to a verifier not told that its caller introspects (`introspectsSingleUse`). */
export class EmbedSingleUseError extends Error {
  override readonly name = 'EmbedSingleUseError';
}

/** The service refuses to mint a token longer than this (MAX_EMBED_TOKEN_BYTES); none is verified. */
const MAX_TOKEN_LENGTH = 8192;
const DEFAULT_TOKEN_CACHE_SIZE = 1000;
const TOKEN_TYPE = 'ugs-embed+jwt';
/** Protected headers remembered (one per kid in practice). */
const MAX_HEADERS = 16;

/**
 * An ES256 signature, 64 bytes, in base64url written canonically: 86 characters, the last one's four
 * unused bits zero. Any other spelling of the same signature is refused, as the high-S twin is. (The
 * header and payload need no such check: the signature is of their text as sent.)
 */
const CANONICAL_SIGNATURE = /^[A-Za-z0-9_-]{85}[AQgw]$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

// P-256's group order halved: an ECDSA signature (r, s) is also valid as (r, n - s); the service signs
// only the low half, so a high-S signature is a second string for a token and is refused.
const HALF_ORDER = Uint8Array.from(
  '7fffffff800000007fffffffffffffffde737d56d38bcf4279dce5617e3192a8'.match(/../g)!,
  (byte) => parseInt(byte, 16),
);

function hasHighS(signature: Uint8Array): boolean {
  for (let i = 0; i < 32; i += 1) {
    const byte = signature[32 + i]!;
    const half = HALF_ORDER[i]!;
    if (byte !== half) return byte > half;
  }
  return false;
}

function decodedJson(segment: string): unknown {
  try {
    return JSON.parse(base64urlText(segment));
  } catch {
    return undefined;
  }
}

/** jose's typ comparison: `application/` is implied, case does not count. */
const normalizedTyp = (typ: string) => (typ.includes('/') ? typ.toLowerCase() : `application/${typ.toLowerCase()}`);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Freezes a parsed JSON value and everything in it. Its members are read by Object.values (an array
 * for an array): a for…in with `value[key]` over the differently shaped objects of a payload is a
 * megamorphic keyed load per member, a third more time for the same result.
 */
function deepFreeze<T extends object>(value: T): T {
  const members: unknown[] = Array.isArray(value) ? value : Object.values(value);
  for (let i = 0; i < members.length; i += 1) {
    const member = members[i];
    if (typeof member === 'object' && member !== null) deepFreeze(member);
  }
  return Object.freeze(value);
}

const isFiniteNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** jose's error for a time claim that is missing (`exp` only) or not a finite number. */
function notANumber(claims: JWTPayload, claim: 'iat' | 'nbf' | 'exp') {
  return claims[claim] === undefined
    ? new errors.JWTClaimValidationFailed(`missing required "${claim}" claim`, claims, claim, 'missing')
    : new errors.JWTClaimValidationFailed(`"${claim}" claim must be a number`, claims, claim, 'invalid');
}

/** One P-256 key of the JWKS, prepared once; a new object whenever its kid names another key. */
interface PreparedKey {
  readonly kid: string;
  readonly x: string;
  readonly y: string;
  readonly verify: Es256Verifier;
}

/** A protected header, checked. */
interface Header {
  readonly kid: string;
  /** Whether its typ is `ugs-embed+jwt` (refused only once the signature verified, as jose does). */
  readonly embedType: boolean;
}

/** A token taken apart, its form and header checked, its signature not yet. */
interface Parsed {
  readonly header: Header;
  readonly payload: string;
  readonly signingInput: string;
  readonly signature: Uint8Array<ArrayBuffer>;
}

/** A token whose form and signature were checked: what every later call still checks it against. */
interface VerifiedToken {
  readonly key: PreparedKey;
  readonly claims: EmbedClaims;
  readonly exp: number;
  readonly nbf: number | undefined;
}

/** Whether a JWKS member is a key jose would use for ES256 (its `isUsableJWK`), with a kid. */
function es256Member(jwk: Record<string, unknown>): jwk is { kid: string; x: string; y: string } {
  const keyOps = jwk.key_ops;
  return (
    jwk.kty === 'EC' &&
    jwk.crv === 'P-256' &&
    typeof jwk.kid === 'string' &&
    typeof jwk.x === 'string' &&
    typeof jwk.y === 'string' &&
    (jwk.alg === undefined || jwk.alg === 'ES256') &&
    (jwk.use === undefined || jwk.use === 'sig') &&
    (keyOps === undefined || (Array.isArray(keyOps) && keyOps.includes('verify')))
  );
}

/**
 * Verifies embed tokens offline, as a dashboard renderer does: signature (ES256, low S, keys from the
 * workspace's JWKS by their kid, cached and refetched when a token names a kid not seen yet — a
 * rotated key — or when they are older than `cacheMaxAgeMs`), `typ`, `iss`, `aud`, `exp`, `nbf`, at
 * most 8 KiB, and the origin when asked (a token minted without one is then refused unless
 * `allowMissingOrigin`). A token seen before skips only the signature: see `tokenCacheSize`. The claims
 * returned are frozen (the same object for each call that presents the same remembered token). It
 * cannot see a rotation of the group token: for that, verify online (`client.verifyToken`).
 */
export function createEmbedTokenVerifier(options: EmbedTokenVerifierOptions) {
  const issuer = options.issuer.replace(/\/+$/, '');
  const cacheSize = options.tokenCacheSize ?? DEFAULT_TOKEN_CACHE_SIZE;
  if (!Number.isInteger(cacheSize) || cacheSize < 0) {
    throw new TypeError(`tokenCacheSize must be a whole number of at least 0, got ${String(options.tokenCacheSize)}.`);
  }
  const remote = createRemoteJWKSet(new URL(`${issuer}/.well-known/jwks.json`), {
    cacheMaxAge: options.cacheMaxAgeMs ?? 600_000,
    ...(options.cooldownMs === undefined ? {} : { cooldownDuration: options.cooldownMs }),
    ...(options.fetch === undefined ? {} : { [customFetch]: options.fetch }),
  });
  // Checked here, not by the types alone: from JavaScript, a verifier without an audience would
  // otherwise fail every call with a TypeError of its own.
  const audienceOf = (audience: unknown, name: string): string[] => {
    const list: unknown = typeof audience === 'string' ? [audience] : audience;
    if (!Array.isArray(list) || !list.every((item) => typeof item === 'string'))
      throw new TypeError(
        `${name} must be an embed_id or a list of them ('ugs-embed' for tokens minted without one), got ${typeof audience === 'object' ? JSON.stringify(audience) : String(audience)}.`,
      );
    return list as string[];
  };
  const defaultAudience = audienceOf(options.audience, 'audience');
  const revocations = options.revocations
    ? createRevocationList(issuer, {
        ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
        ...(options.revocations === true ? {} : options.revocations),
      })
    : undefined;

  /** The JWKS's ES256 keys by kid, as of jose's last fetch (read after each call to `remote`). */
  let keys = new Map<string, PreparedKey>();
  /** Syncs of `keys` run one after the other, each reading the JWKS jose holds when it starts. */
  let syncing: Promise<void> = Promise.resolve();
  /** Tokens whose signature verified, least recently used first (a Map keeps insertion order). */
  const verified = new Map<string, VerifiedToken>();
  /** Protected headers seen (they differ by kid only), checked: a few, so cleared when full. */
  const headers = new Map<string, Header>();
  /** The last header looked up: the one of nearly every token until the next rotation. */
  let lastHeader: { segment: string; header: Header } | undefined;

  /** Prepares the keys of the JWKS jose holds now, keeping those unchanged, and forgets tokens of any other. */
  async function syncKeys(): Promise<void> {
    const jwks = remote.jwks();
    if (!jwks) return;
    const next = new Map<string, PreparedKey>();
    const unusable = new Set<string>();
    for (const jwk of jwks.keys as Record<string, unknown>[]) {
      if (!es256Member(jwk)) continue;
      if (next.has(jwk.kid)) unusable.add(jwk.kid); // two keys of one kid: neither is used
      const known = keys.get(jwk.kid);
      if (known && known.x === jwk.x && known.y === jwk.y) {
        next.set(jwk.kid, known);
        continue;
      }
      try {
        next.set(jwk.kid, { kid: jwk.kid, x: jwk.x, y: jwk.y, verify: await prepareEs256Verifier(jwk) });
      } catch {
        unusable.add(jwk.kid); // not a point of P-256: no token of it verifies
      }
    }
    for (const kid of unusable) next.delete(kid);
    keys = next;
    for (const [token, entry] of verified) if (keys.get(entry.key.kid) !== entry.key) verified.delete(token);
  }

  /** The key named `kid`, fetching the JWKS first when jose would (stale, or an unknown kid past the cooldown). */
  async function keyFor(kid: string): Promise<PreparedKey> {
    try {
      await remote({ alg: 'ES256', kid });
    } finally {
      const sync = syncing.then(syncKeys);
      syncing = sync.catch(() => undefined); // one failed sync must not fail every later one
      await sync;
    }
    const key = keys.get(kid);
    if (!key) throw new errors.JWKSNoMatchingKey();
    return key;
  }

  /**
   * The kid of the protected header that is the first `length` characters of `token`, and whether its
   * typ is an embed token's; refuses any other alg and any crit.
   */
  function headerOf(token: string, length: number): Header {
    // Compared in place with the last one, the header is neither cut out of the token nor hashed.
    if (lastHeader?.segment.length === length && token.startsWith(lastHeader.segment)) return lastHeader.header;
    const segment = token.slice(0, length);
    const known = headers.get(segment);
    if (known) {
      lastHeader = { segment, header: known };
      return known;
    }
    const header = BASE64URL.test(segment) ? decodedJson(segment) : undefined;
    if (!isObject(header)) throw new errors.JWSInvalid('JWS Protected Header is invalid');
    if (header.alg !== 'ES256') {
      throw new errors.JOSEAlgNotAllowed('"alg" (Algorithm) Header Parameter value not allowed');
    }
    if (header.crit !== undefined) throw new errors.JOSENotSupported('An embed token has no "crit" header parameter.');
    if (typeof header.kid !== 'string') throw new errors.JWKSNoMatchingKey('An embed token names its key ("kid").');
    const checked = {
      kid: header.kid,
      embedType: typeof header.typ === 'string' && normalizedTyp(header.typ) === normalizedTyp(TOKEN_TYPE),
    };
    if (headers.size >= MAX_HEADERS) headers.clear();
    headers.set(segment, checked);
    lastHeader = { segment, header: checked };
    return checked;
  }

  /** Checks the token's form and its header; what its signature is of, and the signature. */
  function parse(token: string): Parsed {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH) {
      throw new errors.JWTInvalid(`An embed token is a string of at most ${MAX_TOKEN_LENGTH} characters.`);
    }
    const first = token.indexOf('.');
    const second = token.indexOf('.', first + 1);
    const encodedSignature = token.slice(second + 1);
    if (first < 1 || second < first + 2 || !CANONICAL_SIGNATURE.test(encodedSignature)) {
      throw new errors.JWSInvalid('Not a compact JWS with an ES256 signature.');
    }
    const header = headerOf(token, first);
    const signature = base64urlBytes(encodedSignature);
    if (hasHighS(signature)) throw new errors.JWSSignatureVerificationFailed('The signature is not in low-S form.');
    return { header, payload: token.slice(first + 1, second), signingInput: token.slice(0, second), signature };
  }

  /**
   * The claims of a token whose signature verified under `key`, their form checked (in jose's order:
   * nothing of a payload is read before its signature verified); their values are checked per call
   * by `checkClaims`.
   */
  function verifiedToken(parsed: Parsed, key: PreparedKey): VerifiedToken {
    const payload = decodedJson(parsed.payload);
    if (!isObject(payload)) throw new errors.JWTInvalid('JWT Claims Set must be a top-level JSON object');
    const claims = payload as EmbedClaims;
    if (!parsed.header.embedType) {
      throw new errors.JWTClaimValidationFailed('unexpected "typ" JWT header value', claims, 'typ', 'check_failed');
    }
    const { iat, nbf, exp } = claims;
    if (iat !== undefined && !isFiniteNumber(iat)) throw notANumber(claims, 'iat');
    if (nbf !== undefined && !isFiniteNumber(nbf)) throw notANumber(claims, 'nbf');
    if (!isFiniteNumber(exp)) throw notANumber(claims, 'exp');
    if (!isObject(claims.ugs) || (claims.ugs.origin !== null && typeof claims.ugs.origin !== 'string')) {
      throw new errors.JWTClaimValidationFailed('"ugs" claim is invalid', claims, 'ugs', 'invalid');
    }
    return { key, claims: deepFreeze(claims), exp, nbf };
  }

  /** What holds per call, for a token seen before or not: issuer, audience, lifetime, origin. */
  function checkClaims(entry: VerifiedToken, check: EmbedTokenCheck): EmbedClaims {
    const { claims } = entry;
    if (claims.iss !== issuer) {
      throw new errors.JWTClaimValidationFailed('unexpected "iss" claim value', claims, 'iss', 'check_failed');
    }
    const audience = check.audience === undefined ? defaultAudience : audienceOf(check.audience, "verify's audience");
    const aud = claims.aud;
    if (
      typeof aud === 'string' ? !audience.includes(aud) : !Array.isArray(aud) || !audience.some((a) => aud.includes(a))
    ) {
      throw new errors.JWTClaimValidationFailed('unexpected "aud" claim value', claims, 'aud', 'check_failed');
    }
    const now = Math.floor((check.currentDate === undefined ? Date.now() : check.currentDate.getTime()) / 1000);
    if (!Number.isFinite(now)) throw new TypeError('Invalid currentDate.');
    if (entry.nbf !== undefined && entry.nbf > now) {
      throw new errors.JWTClaimValidationFailed('"nbf" claim timestamp check failed', claims, 'nbf', 'check_failed');
    }
    if (entry.exp <= now)
      throw new errors.JWTExpired('"exp" claim timestamp check failed', claims, 'exp', 'check_failed');
    const origin = claims.ugs.origin;
    if (check.origin !== undefined && origin === null && !options.allowMissingOrigin) {
      throw new EmbedOriginError(`The embed token was minted without an origin; this page is ${check.origin}.`);
    }
    if (check.origin !== undefined && origin !== null && origin !== check.origin) {
      throw new EmbedOriginError(`The embed token is for ${origin}, not ${check.origin}.`);
    }
    if (claims.ugs.single_use === true && options.introspectsSingleUse !== true) {
      throw new EmbedSingleUseError(
        'The embed token is single-use: introspect it (which consumes it), or create the verifier with introspectsSingleUse.',
      );
    }
    return claims;
  }

  return async function verify(token: string, check: EmbedTokenCheck = {}): Promise<EmbedClaims> {
    const seen = verified.get(token);
    if (seen !== undefined) {
      // A remembered token stands only while its key does, in the JWKS as last fetched (fetched again
      // first when older than cacheMaxAgeMs), and only until it expires.
      let current = keys.get(seen.key.kid);
      if (!remote.fresh) {
        try {
          current = await keyFor(seen.key.kid);
        } catch (error) {
          verified.delete(token);
          throw error;
        }
      }
      if (current === seen.key) {
        if (check.currentDate === undefined && seen.exp <= Math.floor(Date.now() / 1000)) verified.delete(token);
        const claims = checkClaims(seen, check);
        verified.delete(token); // the most recently used goes last
        verified.set(token, seen);
        if (revocations) {
          const pending = revocations.check(claims);
          if (pending) await pending;
        }
        return claims;
      }
      verified.delete(token);
    }
    // The full verification. It awaits only to fetch keys, and for WebCrypto's verify (browsers).
    const parsed = parse(token);
    const key = (remote.fresh && keys.get(parsed.header.kid)) || (await keyFor(parsed.header.kid));
    let valid = key.verify(parsed.signingInput, parsed.signature);
    if (typeof valid !== 'boolean') valid = await valid;
    if (!valid) throw new errors.JWSSignatureVerificationFailed();
    const entry = verifiedToken(parsed, key);
    const claims = checkClaims(entry, check);
    if (cacheSize > 0 && keys.get(entry.key.kid) === entry.key) {
      verified.set(token, entry);
      if (verified.size > cacheSize) verified.delete(verified.keys().next().value!);
    }
    if (revocations) {
      const pending = revocations.check(claims);
      if (pending) await pending;
    }
    return claims;
  };
}

export type EmbedTokenVerifier = ReturnType<typeof createEmbedTokenVerifier>;
