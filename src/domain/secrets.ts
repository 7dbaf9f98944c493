import { createCipheriv, createDecipheriv, createHash, createHmac, hash, hkdfSync, randomBytes } from 'node:crypto';
import type { Environment } from './tenancy.js';

export const USER_GROUP_TOKEN_PREFIX = 'ugt_';
const API_TOKEN_PREFIX: Record<Environment, string> = { Customer: 'ugs_live_', Testing: 'ugs_test_' };

/** `ugt_` + 64 lowercase hex characters: 256 bits from the OS CSPRNG. */
export function generateUserGroupToken(): string {
  return USER_GROUP_TOKEN_PREFIX + randomBytes(32).toString('hex');
}

const USER_GROUP_TOKEN_SHAPE = /^ugt_[0-9a-f]{64}$/;

/** Whether a string could be a user group token at all; anything else is unknown without a lookup. */
export function isUserGroupTokenShaped(value: string): boolean {
  return USER_GROUP_TOKEN_SHAPE.test(value);
}

/*
 * A token of the hosted product, imported with its group (docs/api.md#tokens-imported-from-the-hosted-product): 32 to 256 visible ASCII
 * characters without "." (a JWS always has two: that shape is an embed token's), such as a UUID. The
 * native prefix stays ours: a string starting ugt_ is a native token or nothing.
 */
const HOSTED_TOKEN_SHAPE = /^[\x21-\x2d\x2f-\x7e]{32,256}$/;

export function isHostedTokenShaped(value: string): boolean {
  return HOSTED_TOKEN_SHAPE.test(value) && !value.startsWith(USER_GROUP_TOKEN_PREFIX);
}

/**
 * What a presented user group token is looked up by: a native token's SHA-256 (256 random bits need
 * no key), a hosted token's keyed hashes under every key of the keyring, the current key's first (a
 * hosted token may be guessable, so a copy of the database alone must not let anyone test guesses);
 * nothing for a string of neither shape, which no group can hold.
 */
export function tokenLookupHashes(token: string, cipher: TokenCipher): string[] {
  if (isUserGroupTokenShaped(token)) return [hashSecret(token)];
  return isHostedTokenShaped(token) ? cipher.lookupHashes(token) : [];
}

/** What a group's token is stored under: its first lookup hash (a hosted token's under the current key). */
export function storedTokenHash(token: string, cipher: TokenCipher): string {
  const [stored] = tokenLookupHashes(token, cipher);
  if (stored === undefined) throw new Error('Not a user group token of either shape.');
  return stored;
}

/** The prefix tells an operator (and a secret scanner) which environment a leaked token opens. */
export function generateApiToken(environment: Environment): string {
  return API_TOKEN_PREFIX[environment] + randomBytes(32).toString('hex');
}

const CONSOLE_SESSION_PREFIX = 'ucs_';
const CONSOLE_SESSION_SHAPE = /^ucs_[0-9a-f]{64}$/;

/** An admin console session's secret (its cookie's value): 256 bits from the OS CSPRNG. */
export function generateConsoleSessionSecret(): string {
  return CONSOLE_SESSION_PREFIX + randomBytes(32).toString('hex');
}

export function isConsoleSessionSecretShaped(value: string): boolean {
  return CONSOLE_SESSION_SHAPE.test(value);
}

/** Lookup key for a secret. The secrets are 256-bit random values, so an unsalted hash is safe. */
export function hashSecret(secret: string): string {
  // The one-shot form: every authenticated request hashes its API token, and a Hash object per call costs twice as much.
  return hash('sha256', secret, 'hex');
}

export const ENCRYPTION_KEY_BYTES = 32;

/** Encrypts user group tokens at rest so get-or-create can return them; see docs/security.md. */
export interface TokenCipher {
  /** Short id of the key that encrypts, written into each ciphertext so that keys can rotate. */
  readonly keyId: string;
  encrypt(plaintext: string): string;
  decrypt(ciphertext: string): string;
  /**
   * Keyed hashes of a secret, one per key, the encrypting key's first: `k1.<keyId>.<HMAC-SHA256 hex>`
   * under a key derived (HKDF) from each encryption key. A row's keyed hash is made under the key of
   * its ciphertext, and key rotation replaces both together, so the keys that open a database also
   * find its hosted tokens.
   */
  lookupHashes(secret: string): string[];
}

const FORMAT_VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
// Binds ciphertexts to their purpose: one made for something else under the same key fails to open.
const ASSOCIATED_DATA = Buffer.from('ugs:user_group_token', 'utf8');

/** A key id is this many hex characters of the key's SHA-256. */
const KEY_ID_LENGTH = 8;

export function encryptionKeyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, KEY_ID_LENGTH);
}

/**
 * Where a ciphertext's key id stands in its text (`v1.<keyId>.…`), 1-based as SQL's substr counts:
 * the stores select ciphertexts by key id in SQL (src/store/ciphertext-columns.ts).
 */
export const CIPHERTEXT_KEY_ID_SPAN = { start: FORMAT_VERSION.length + 2, length: KEY_ID_LENGTH } as const;

/** The id of the key a ciphertext was made with, or undefined when it is not in this format at all. */
export function keyIdOfCiphertext(ciphertext: string): string | undefined {
  const [version, keyId] = ciphertext.split('.', 2);
  return version === FORMAT_VERSION ? keyId : undefined;
}

/** A fresh random key, as `ugs keys rotate` and `ugs keys generate` make them. */
export function generateEncryptionKey(): Buffer {
  return randomBytes(ENCRYPTION_KEY_BYTES);
}

const LOOKUP_HASH_VERSION = 'k1';
// Domain separation: the HMAC key is never the encryption key itself.
const LOOKUP_KEY_INFO = 'ugs:user_group_token_lookup';

/** AES-256-GCM under one key; ciphertext text form: `v1.<keyId>.<iv>.<tag>.<data>` (base64url parts). */
export function createTokenCipher(key: Buffer): TokenCipher {
  if (key.length !== ENCRYPTION_KEY_BYTES) {
    throw new Error(`The encryption key must be ${ENCRYPTION_KEY_BYTES} bytes, got ${key.length}.`);
  }
  const keyId = encryptionKeyId(key);
  const lookupKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), LOOKUP_KEY_INFO, ENCRYPTION_KEY_BYTES));
  return {
    keyId,
    lookupHashes: (secret) => [
      `${LOOKUP_HASH_VERSION}.${keyId}.${createHmac('sha256', lookupKey).update(secret, 'utf8').digest('hex')}`,
    ],
    encrypt(plaintext) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(ASSOCIATED_DATA);
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [
        FORMAT_VERSION,
        keyId,
        iv.toString('base64url'),
        tag.toString('base64url'),
        data.toString('base64url'),
      ].join('.');
    },
    decrypt(ciphertext) {
      const [version, cipherKeyId, iv, tag, data] = ciphertext.split('.');
      if (version !== FORMAT_VERSION || iv === undefined || tag === undefined || data === undefined) {
        throw new Error('Unrecognised token ciphertext format.');
      }
      if (cipherKeyId !== keyId) {
        throw new Error(`Token ciphertext was made with key ${cipherKeyId}, but key ${keyId} is configured.`);
      }
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(ASSOCIATED_DATA);
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
