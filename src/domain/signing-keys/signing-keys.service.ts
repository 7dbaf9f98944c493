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
  /** When it leaves the JWKS: null while current, else retirement plus the longest token lifetime. */
  publishedUntil: string | null;
}

export type SigningKeyService = ReturnType<typeof createSigningKeyService>;

const withPublication = (key: SigningKeyRecord): PublishedKey => ({ ...key, publishedUntil: publishedUntil(key) });

/**
 * The ES256 key pairs of each issuer, a workspace's environment (docs/api.md#embed-tokens): created on first need,
 * the private half stored as a keyring ciphertext, one current key per issuer shared by every
 * instance (read from the database at each signing, so a rotation on one instance signs at once on
 * all), retired keys published until every token they could have signed has expired. Mint and
 * verify read one key (the current one, or the one the token's kid names), never the whole set.
 */
export function createSigningKeyService({
  store,
  cipher,
  clock,
}: {
  store: SigningKeyStore;
  cipher: TokenCipher;
  clock: Clock;
}) {
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
    return (await store.listSigningKeys(issuer, publishedSince(clock()))).map(withPublication);
  }

  return {
    published,

    /**
     * The issuer's current key, created (and audited as `actor`'s) when it has none yet. Which key is
     * current is read for each mint, after its request arrived (the mints of one turn of the event loop
     * share one read: src/store/hot-reads.ts), so a rotation through any instance signs the next
     * request on all of them; the key itself is decrypted and prepared once per process (docs/adr/0014-embed-token-issuers-and-keys.md).
     */
    async signingKey(issuer: Tenant, actor: Actor): Promise<SigningKey> {
      const current =
        (await store.findCurrentSigningKey(issuer)) ??
        (await store.insertFirstSigningKey(await newKey(issuer), auditContextOf(clock, { actor, requestId: null })));
      return prepare(current);
    },

    /** The issuer's public key `kid`, while it is published; null otherwise (another issuer's kid included). */
    async verificationKey(issuer: Tenant, kid: string): Promise<UsableKey | null> {
      const found = await store.findSigningKey(issuer, kid);
      if (!found || !isPublished(found, clock())) return null;
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
     * A new current key for the caller's own environment from now on (admin); the old one stays
     * published for MAX_EMBED_TOKEN_LIFETIME_S. Beyond MAX_PUBLISHED_KEYS published keys it is refused
     * (`signing_key_limit`) unless `force`, which drops the oldest.
     */
    async rotate(
      caller: Caller,
      { force = false }: { force?: boolean } = {},
    ): Promise<{ current: PublishedKey; retired: PublishedKey | null; dropped: PublishedKey[] }> {
      requireScope(caller, 'admin');
      const rotation = await store.rotateSigningKey(await newKey(caller.tenant), auditContextOf(clock, caller), {
        publishedSince: publishedSince(clock()),
        force,
      });
      if (rotation.status === 'limit_reached') throw failure.signingKeyLimit(rotation.published, MAX_PUBLISHED_KEYS);
      return {
        current: withPublication(rotation.current),
        retired: rotation.retired && withPublication(rotation.retired),
        dropped: rotation.dropped.map(withPublication),
      };
    },
  };
}
