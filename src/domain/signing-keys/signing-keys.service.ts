import { performance } from 'node:perf_hooks';
import { createPrivateKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { auditContextOf } from '../audit/audit-context.js';
import type { Clock } from '../clock.js';
import { failure } from '../errors.js';
import type { JsonObject } from '../common.records.js';
import type { NewSigningKey, SigningKeyRecord } from './signing-key.records.js';
import type { TokenCipher } from '../secrets.js';
import { requireScope } from '../api-tokens/scopes.js';
import { isPublished, publishedSince, publishedUntil } from './signing-keys.rules.js';
import { MAX_PUBLISHED_KEYS } from '../../wire/contract.constants.js';
import type { Actor, Caller, Tenant } from '../tenancy.js';
import type { SigningKeyStore } from './signing-keys.port.js';

export const EMBED_TOKEN_ALGORITHM = 'ES256';

type ImportedKey = Awaited<ReturnType<typeof importJWK>>;

/** A key ready to sign or verify with, imported once per process (a kid names one key for ever). */
export interface UsableKey {
  kid: string;
  key: ImportedKey;
}

/**
 * The issuer's current key, ready to sign: its private half as a node:crypto KeyObject, decrypted and
 * prepared once per process (a kid names one key for ever), and its JWS header already encoded.
 */
export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  /** base64url of `{"alg":"ES256","kid":…,"typ":"ugs-embed+jwt"}`, the first part of every token it signs. */
  encodedHeader: string;
}

export const EMBED_TOKEN_TYPE = 'ugs-embed+jwt';

export interface PublishedKey extends SigningKeyRecord {
  /**
   * When it leaves the JWKS: null while current, else retirement plus the longest token lifetime plus
   * the bound for which another instance may still sign with it (CURRENT_KEY_HELD_MS).
   */
  publishedUntil: string | null;
}

export type SigningKeyService = ReturnType<typeof createSigningKeyService>;

/**
 * How long an instance goes on signing with the current key it read, in milliseconds, before reading
 * it again. Without it every mint reads the current key (on PostgreSQL a second round trip beside the
 * group's read); with it an issuer's key is read once per 5 s per instance. The price: an instance
 * may sign with a key for up to 5 s after a rotation made through another one (one made through this
 * instance is seen at once), so a retired key stays published 5 s longer (signing-keys.rules.ts),
 * and a leaked key goes on signing on other instances for that long. 5 s is short beside a token's
 * lifetime (a minute at least) and the day a retired key stays published, and long beside the
 * milliseconds between mints under load, where the read costs.
 */
export const CURRENT_KEY_HELD_MS = 5_000;

/**
 * The ES256 key pairs of each issuer, a workspace's environment (docs/api.md#embed-tokens): created on first need,
 * the private half stored as a keyring ciphertext, one current key per issuer shared by every
 * instance (held in memory for CURRENT_KEY_HELD_MS, so a rotation on one instance signs there at once
 * and on the others within that bound), retired keys published until every token they could have
 * signed has expired. Mint and verify read one key (the current one, or the one the token's kid
 * names), never the whole set.
 */
export function createSigningKeyService({
  store,
  cipher,
  clock,
  currentKeyHeldMs = CURRENT_KEY_HELD_MS,
}: {
  store: SigningKeyStore;
  cipher: TokenCipher;
  clock: Clock;
  /** How long the current key read is signed with before it is read again: CURRENT_KEY_HELD_MS unless given (tests). */
  currentKeyHeldMs?: number;
}) {
  const withPublication = (key: SigningKeyRecord): PublishedKey => ({
    ...key,
    publishedUntil: publishedUntil(key, currentKeyHeldMs),
  });
  const imported = new Map<string, Promise<ImportedKey>>();
  const importOnce = (cacheKey: string, jwk: () => JWK) => {
    let key = imported.get(cacheKey);
    if (!key) {
      key = importJWK(jwk(), EMBED_TOKEN_ALGORITHM);
      imported.set(cacheKey, key);
    }
    return key;
  };
  const prepared = new Map<string, SigningKey>();
  const prepare = (current: SigningKeyRecord): SigningKey => {
    let key = prepared.get(current.kid);
    if (!key) {
      const jwk = JSON.parse(cipher.decrypt(current.privateKeyCiphertext)) as JWK;
      const header = { alg: EMBED_TOKEN_ALGORITHM, kid: current.kid, typ: EMBED_TOKEN_TYPE };
      key = {
        kid: current.kid,
        privateKey: createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' }),
        encodedHeader: Buffer.from(JSON.stringify(header)).toString('base64url'),
      };
      prepared.set(current.kid, key);
    }
    return key;
  };
  /*
   * Each issuer's current key as last read, with when that read began on the monotonic clock (the
   * services' clock may be a test's, standing still). The entry is the read's promise, set before the
   * read is made: the mints that come meanwhile share it, and a rotation through this instance, which
   * deletes the entry, cannot be undone by a read begun before it and answered after.
   */
  const held = new Map<string, { readAt: number; key: Promise<SigningKey> }>();
  const issuerKey = (issuer: Tenant) => `${issuer.workspaceId}/${issuer.environment}`;
  let lowSignaturesSince: Promise<number> | undefined;

  async function newKey(issuer: Tenant): Promise<NewSigningKey> {
    const pair = await generateKeyPair(EMBED_TOKEN_ALGORITHM, { extractable: true });
    const publicJwk = await exportJWK(pair.publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const privateJwk = await exportJWK(pair.privateKey);
    return {
      workspaceId: issuer.workspaceId,
      environment: issuer.environment,
      kid,
      publicJwk: { ...publicJwk, kid, alg: EMBED_TOKEN_ALGORITHM, use: 'sig' } as JsonObject,
      privateKeyCiphertext: cipher.encrypt(JSON.stringify(privateJwk)),
      createdAt: clock(),
    };
  }

  /** Every key of the issuer whose tokens may still be live, newest first. */
  async function published(issuer: Tenant): Promise<PublishedKey[]> {
    return (await store.listSigningKeys(issuer, publishedSince(clock(), currentKeyHeldMs))).map(withPublication);
  }

  async function readCurrent(issuer: Tenant, actor: Actor): Promise<SigningKey> {
    const current =
      (await store.findCurrentSigningKey(issuer)) ??
      (await store.insertFirstSigningKey(await newKey(issuer), auditContextOf(clock, { actor, requestId: null })));
    return prepare(current);
  }

  return {
    published,

    /**
     * The issuer's current key, created (and audited as `actor`'s) when it has none yet (two instances
     * racing for the first key both get the one that won). Which key is current is read again once
     * the read held is CURRENT_KEY_HELD_MS old, so a rotation through another instance signs here
     * within that bound; one through this instance, at once. The key itself is decrypted and prepared
     * once per process (docs/adr/0014-embed-token-issuers-and-keys.md).
     */
    signingKey(issuer: Tenant, actor: Actor): Promise<SigningKey> {
      const id = issuerKey(issuer);
      const now = performance.now();
      const last = held.get(id);
      if (last && now - last.readAt < currentKeyHeldMs) return last.key;
      const entry = { readAt: now, key: readCurrent(issuer, actor) };
      held.set(id, entry);
      // A failed read is not held: the next mint reads again.
      entry.key.catch(() => {
        if (held.get(id) === entry) held.delete(id);
      });
      return entry.key;
    },

    /** The issuer's public key `kid`, while it is published; null otherwise (another issuer's kid included). */
    async verificationKey(issuer: Tenant, kid: string): Promise<UsableKey | null> {
      const found = await store.findSigningKey(issuer, kid);
      if (!found || !isPublished(found, clock(), currentKeyHeldMs)) return null;
      return { kid, key: await importOnce(`public:${kid}`, () => found.publicJwk as JWK) };
    },

    /** When the service began signing low-S, in epoch milliseconds: read once, it never changes. */
    lowSignaturesSince(): Promise<number> {
      lowSignaturesSince ??= store.lowSignaturesSince().then(Date.parse, (error: unknown) => {
        lowSignaturesSince = undefined;
        throw error;
      });
      return lowSignaturesSince;
    },

    /** The published keys of the caller's environment's issuer (admin). */
    list(caller: Caller): Promise<PublishedKey[]> {
      requireScope(caller, 'admin');
      return published(caller.tenant);
    },

    /**
     * A new current key for the caller's own environment from now on (admin), on this instance at
     * once; the old one stays published for MAX_EMBED_TOKEN_LIFETIME_S plus CURRENT_KEY_HELD_MS.
     * Beyond MAX_PUBLISHED_KEYS published keys it is refused (`signing_key_limit`) unless `force`,
     * which drops the oldest.
     */
    async rotate(
      caller: Caller,
      { force = false }: { force?: boolean } = {},
    ): Promise<{ current: PublishedKey; retired: PublishedKey | null; dropped: PublishedKey[] }> {
      requireScope(caller, 'admin');
      const key = await newKey(caller.tenant);
      let rotation;
      try {
        rotation = await store.rotateSigningKey(key, auditContextOf(clock, caller), {
          publishedSince: publishedSince(clock(), currentKeyHeldMs),
          force,
        });
      } finally {
        // Dropped whatever the outcome: a rotation whose answer was lost may still have committed.
        held.delete(issuerKey(caller.tenant));
      }
      if (rotation.status === 'limit_reached') throw failure.signingKeyLimit(rotation.published, MAX_PUBLISHED_KEYS);
      return {
        current: withPublication(rotation.current),
        retired: rotation.retired && withPublication(rotation.retired),
        dropped: rotation.dropped.map(withPublication),
      };
    },
  };
}
