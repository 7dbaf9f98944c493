import { createTokenCipher, keyIdOfCiphertext, type TokenCipher } from '../secrets.js';

/**
 * Several keys behind the one TokenCipher interface: the first (current) key encrypts, and every
 * key decrypts the ciphertexts that name it. This is what lets keys rotate while data stays
 * readable: a new key goes first, the old ones stay until nothing is encrypted under them.
 */
export interface Keyring extends TokenCipher {
  /** Every key id it holds, the current one (`keyId`) first. */
  readonly keyIds: readonly string[];
  /**
   * Looks at the key source now, for a keyring that follows one (a key file); true when it loaded
   * other keys. A lookup that missed asks, since `ugs keys rotate` may have re-hashed under a key
   * this process has not polled yet.
   */
  refresh?(): boolean;
}

/** A ciphertext made under a key the keyring does not hold: a configuration error, never a client's. */
export class UnknownEncryptionKeyError extends Error {
  constructor(
    readonly keyId: string,
    configured: readonly string[],
  ) {
    super(
      `Token ciphertext was made with key ${keyId}, which is not among the configured keys (${configured.join(', ')}).`,
    );
    this.name = 'UnknownEncryptionKeyError';
  }
}

/** `keys` in order, the current one first; validating them (length, duplicates) is the caller's job. */
export function createKeyring(keys: readonly Buffer[]): Keyring {
  const ciphers = keys.map(createTokenCipher);
  const [current] = ciphers;
  if (!current) throw new Error('A keyring needs at least one key.');
  const byId = new Map(ciphers.map((cipher) => [cipher.keyId, cipher]));
  if (byId.size !== ciphers.length) throw new Error('Two keys of the keyring have the same key id.');
  const keyIds = ciphers.map((cipher) => cipher.keyId);
  return {
    keyId: current.keyId,
    keyIds,
    encrypt: (plaintext) => current.encrypt(plaintext),
    lookupHashes: (secret) => ciphers.flatMap((cipher) => cipher.lookupHashes(secret)),
    decrypt(ciphertext) {
      const keyId = keyIdOfCiphertext(ciphertext);
      // A ciphertext of another format is the single-key cipher's to refuse, with its own message.
      const cipher = keyId === undefined ? current : byId.get(keyId);
      if (!cipher) throw new UnknownEncryptionKeyError(keyId!, keyIds);
      return cipher.decrypt(ciphertext);
    },
  };
}
