// The keyring behind TokenCipher: the first key encrypts, every key decrypts what names it.
import { describe, expect, it } from 'vitest';
import { createKeyring, UnknownEncryptionKeyError } from '../../src/domain/encryption-keys/keyring.js';
import {
  CIPHERTEXT_KEY_ID_SPAN,
  createTokenCipher,
  encryptionKeyId,
  generateEncryptionKey,
  keyIdOfCiphertext,
} from '../../src/domain/secrets.js';

const TOKEN = `ugt_${'ab'.repeat(32)}`;

describe('keyring', () => {
  const [current, older, oldest] = [generateEncryptionKey(), generateEncryptionKey(), generateEncryptionKey()];

  it("puts the key id where the stores' SQL reads it (substr, 1-based)", () => {
    const ciphertext = createTokenCipher(current).encrypt(TOKEN);
    const { start, length } = CIPHERTEXT_KEY_ID_SPAN;
    expect(ciphertext.slice(start - 1, start - 1 + length)).toBe(encryptionKeyId(current));
  });

  it('encrypts under its first key and names it in the ciphertext', () => {
    const keyring = createKeyring([current, older]);
    expect(keyring.keyId).toBe(encryptionKeyId(current));
    expect(keyring.keyIds).toEqual([encryptionKeyId(current), encryptionKeyId(older)]);
    const ciphertext = keyring.encrypt(TOKEN);
    expect(keyIdOfCiphertext(ciphertext)).toBe(encryptionKeyId(current));
    expect(ciphertext).not.toContain(TOKEN.slice(4));
    // Only the current key opens it.
    expect(createTokenCipher(current).decrypt(ciphertext)).toBe(TOKEN);
    expect(() => createTokenCipher(older).decrypt(ciphertext)).toThrow(/made with key/);
  });

  it('decrypts what any of its keys encrypted, whatever its position', () => {
    const keyring = createKeyring([current, older, oldest]);
    for (const key of [current, older, oldest]) {
      expect(keyring.decrypt(createKeyring([key]).encrypt(TOKEN))).toBe(TOKEN);
    }
  });

  it('refuses a ciphertext under a key it does not hold, naming that key and the ones it holds', () => {
    const keyring = createKeyring([current, older]);
    const foreign = createKeyring([oldest]).encrypt(TOKEN);
    let error: unknown;
    try {
      keyring.decrypt(foreign);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UnknownEncryptionKeyError);
    expect((error as UnknownEncryptionKeyError).keyId).toBe(encryptionKeyId(oldest));
    expect((error as Error).message).toBe(
      `Token ciphertext was made with key ${encryptionKeyId(oldest)}, which is not among the configured keys (${encryptionKeyId(current)}, ${encryptionKeyId(older)}).`,
    );
    expect((error as Error).message).not.toContain(oldest.toString('base64'));
  });

  it('refuses a tampered ciphertext and one of another format', () => {
    const keyring = createKeyring([current, older]);
    const parts = createKeyring([older]).encrypt(TOKEN).split('.');
    const data = Buffer.from(parts[4]!, 'base64url');
    data[0] = data[0]! ^ 1;
    parts[4] = data.toString('base64url');
    expect(() => keyring.decrypt(parts.join('.'))).toThrow();
    expect(() => keyring.decrypt('v2.whatever')).toThrow(/Unrecognised token ciphertext format/);
    expect(keyIdOfCiphertext('v2.whatever')).toBeUndefined();
  });

  it('needs at least one key, and keys with distinct ids', () => {
    expect(() => createKeyring([])).toThrow(/at least one key/);
    expect(() => createKeyring([current, older, current])).toThrow(/same key id/);
    expect(() => createKeyring([Buffer.alloc(16)])).toThrow(/32 bytes/);
  });
});
