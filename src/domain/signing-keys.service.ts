import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { auditContextOf } from './audit-context.js';
import type { Clock } from './clock.js';
import type { JsonObject, NewSigningKey, SigningKeyRecord } from './models.js';
import type { TokenCipher } from './secrets.js';
import { requireScope } from './scopes.js';
import type { Actor, Caller } from './tenancy.js';
import type { SigningKeyStore } from '../store/store.js';
import { MAX_EMBED_TOKEN_LIFETIME_S } from '../wire/contract.constants.js';

export const EMBED_TOKEN_ALGORITHM = 'ES256';

type ImportedKey = Awaited<ReturnType<typeof importJWK>>;

/** A key ready to sign or verify with, imported once per process (a kid names one key for ever). */
export interface UsableKey {
  kid: string;
  key: ImportedKey;
}

export interface PublishedKey extends SigningKeyRecord {
  /** When it leaves the JWKS: null while current, else retirement plus the longest token lifetime. */
  publishedUntil: string | null;
}

export type SigningKeyService = ReturnType<typeof createSigningKeyService>;

/**
 * Each workspace's ES256 key pairs (SPEC §10): created on first need, the private half stored as a
 * keyring ciphertext, one current key shared by every instance (read from the database at each
 * signing, so a rotation on one instance signs at once on all), retired keys published until every
 * token they could have signed has expired.
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

  async function newKey(workspaceId: number): Promise<NewSigningKey> {
    const pair = await generateKeyPair(EMBED_TOKEN_ALGORITHM, { extractable: true });
    const publicJwk = await exportJWK(pair.publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const privateJwk = await exportJWK(pair.privateKey);
    return {
      workspaceId,
      kid,
      publicJwk: { ...publicJwk, kid, alg: EMBED_TOKEN_ALGORITHM, use: 'sig' } as JsonObject,
      privateKeyCiphertext: cipher.encrypt(JSON.stringify(privateJwk)),
      createdAt: clock(),
    };
  }

  const publishedUntil = (key: SigningKeyRecord) =>
    key.retiredAt === null
      ? null
      : new Date(Date.parse(key.retiredAt) + MAX_EMBED_TOKEN_LIFETIME_S * 1000).toISOString();

  /** Every key whose tokens may still be live, newest first. */
  async function published(workspaceId: number): Promise<PublishedKey[]> {
    const now = Date.parse(clock());
    return (await store.listSigningKeys(workspaceId))
      .map((key) => ({ ...key, publishedUntil: publishedUntil(key) }))
      .filter((key) => key.publishedUntil === null || Date.parse(key.publishedUntil) > now);
  }

  return {
    published,

    /** The workspace's current key, created (and audited as `actor`'s) when it has none yet. */
    async signingKey(workspaceId: number, actor: Actor): Promise<UsableKey> {
      const current =
        (await store.listSigningKeys(workspaceId)).find((key) => key.retiredAt === null) ??
        (await store.insertFirstSigningKey(
          await newKey(workspaceId),
          auditContextOf(clock, { actor, requestId: null }),
        ));
      const key = await importOnce(
        `private:${current.kid}`,
        () => JSON.parse(cipher.decrypt(current.privateKeyCiphertext)) as JWK,
      );
      return { kid: current.kid, key };
    },

    /** The public key `kid` of the workspace, while it is published; null otherwise. */
    async verificationKey(workspaceId: number, kid: string): Promise<UsableKey | null> {
      const found = (await published(workspaceId)).find((key) => key.kid === kid);
      if (!found) return null;
      return { kid, key: await importOnce(`public:${kid}`, () => found.publicJwk as JWK) };
    },

    /** The caller's workspace's published keys (admin). */
    list(caller: Caller): Promise<PublishedKey[]> {
      requireScope(caller, 'admin');
      return published(caller.tenant.workspaceId);
    },

    /** A new current key from now on (admin); the old one stays published for MAX_EMBED_TOKEN_LIFETIME_S. */
    async rotate(caller: Caller): Promise<{ current: PublishedKey; retired: PublishedKey | null }> {
      requireScope(caller, 'admin');
      const { current, retired } = await store.rotateSigningKey(
        await newKey(caller.tenant.workspaceId),
        auditContextOf(clock, caller),
      );
      return {
        current: { ...current, publishedUntil: null },
        retired: retired && { ...retired, publishedUntil: publishedUntil(retired) },
      };
    },
  };
}
