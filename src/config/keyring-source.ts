import { statSync, type Stats } from 'node:fs';
import { createKeyring, UnknownEncryptionKeyError, type Keyring } from '../domain/encryption-keys/keyring.js';
import type { DatabaseLocation } from './database-url.js';
import { loadEncryptionKeys, readKeyFile, type KeySource, type LoadOptions } from './encryption-key.js';

/** How often a process looks at the key file's metadata for a change (one stat, off the request path). */
export const KEY_FILE_POLL_MS = 1_000;

/**
 * By then every process using the key file has switched to its current key: one poll interval,
 * doubled for the turn of a busy event loop in which the due poll waits (a process encrypts only
 * while its loop turns, so a stalled loop writes nothing under the old key meanwhile). `ugs keys rotate` makes its final pass no earlier than this after
 * writing the file, so no server is still encrypting under an old key when it reports.
 */
export const KEY_FILE_PICKUP_MS = 2 * KEY_FILE_POLL_MS;

/** What a process learns when it reloads the key file: the new current key, or why it kept the old keys. */
export type KeyReload = { keyId: string; keyIds: readonly string[] } | { error: Error };

export interface KeyringHandle {
  /** Always the latest keys: with a key file, it follows the file's changes. */
  keyring: Keyring;
  source: KeySource;
  /** Re-reads the key file now if it changed (a no-op with keys from the environment). */
  reload(): void;
  /** Stops watching the key file. */
  close(): void;
}

/**
 * The keyring of a process. Keys from UGS_ENCRYPTION_KEY are fixed for the life of the process (a
 * rolling restart changes them). A key file is watched: a change makes the new first key the one
 * that encrypts, within KEY_FILE_POLL_MS. A ciphertext under a key the keyring does not hold makes
 * it look at the file at once, so a row re-encrypted by `ugs keys rotate` never fails to open in a
 * server that has not polled yet. A file that cannot be read or parsed leaves the previous keys in
 * place and is reported through `onReload`.
 */
export function openKeyring(
  location: DatabaseLocation,
  configured: string | undefined,
  onReload: (event: KeyReload) => void = () => undefined,
  loadOptions: LoadOptions = {},
): KeyringHandle {
  const { keys, source } = loadEncryptionKeys(location, configured, loadOptions);
  if (source.kind === 'environment')
    return { keyring: createKeyring(keys), source, reload: () => undefined, close: () => undefined };

  const { path } = source;
  // Version first, then content: a change in between is then seen as a change, never missed.
  let loadedVersion = fileVersion(statSync(path));
  let current = createKeyring(readKeyFile(path));

  /** Whether it loaded a changed file. */
  const reload = (): boolean => {
    let version: string;
    try {
      version = fileVersion(statSync(path));
    } catch (error) {
      onReload({ error: error as Error });
      return false;
    }
    if (version === loadedVersion) return false;
    // Settled either way: a broken file is reported once, not on every poll, until it changes again.
    loadedVersion = version;
    try {
      current = createKeyring(readKeyFile(path));
    } catch (error) {
      onReload({ error: error as Error });
      return false;
    }
    onReload({ keyId: current.keyId, keyIds: current.keyIds });
    return true;
  };

  const onChange = () => void reload();
  // Polled against the version this process actually loaded, not with fs.watchFile: that takes its
  // baseline with an asynchronous stat on libuv's thread pool, so when the pool is busy the file can
  // be replaced before the baseline is taken, and that change is then never reported at all.
  const poll = setInterval(onChange, KEY_FILE_POLL_MS);
  poll.unref();

  const keyring: Keyring = {
    get keyId() {
      return current.keyId;
    },
    get keyIds() {
      return current.keyIds;
    },
    encrypt: (plaintext) => current.encrypt(plaintext),
    lookupHashes: (secret) => current.lookupHashes(secret),
    refresh: reload,
    decrypt(ciphertext) {
      try {
        return current.decrypt(ciphertext);
      } catch (error) {
        if (error instanceof UnknownEncryptionKeyError && reload()) return current.decrypt(ciphertext);
        throw error;
      }
    },
  };
  return { keyring, source, reload: onChange, close: () => clearInterval(poll) };
}

/** Changes whenever the file is replaced (rename) or rewritten. */
function fileVersion(stats: Stats): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
}
