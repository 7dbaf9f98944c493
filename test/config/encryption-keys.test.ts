// Where the keys come from: UGS_ENCRYPTION_KEY or the SQLite key file, their validation, the
// key file's atomic rewrite and lock, and a process following the key file while it runs.
import { spawnSync } from 'node:child_process';
import { pbkdf2 } from 'node:crypto';
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keyFilePath, loadEncryptionKeys, readKeyFile, writeKeyFile } from '../../src/config/encryption-key.js';
import { withKeyFileLock } from '../../src/config/key-file-lock.js';
import { openKeyring, type KeyReload, type KeyringHandle } from '../../src/config/keyring-source.js';
import { createKeyring } from '../../src/domain/encryption-keys/keyring.js';
import { encryptionKeyId, generateEncryptionKey } from '../../src/domain/secrets.js';
import { waitFor } from '../support/wait-for.js';

const TOKEN = `ugt_${'cd'.repeat(32)}`;
const [k1, k2, k3] = [generateEncryptionKey(), generateEncryptionKey(), generateEncryptionKey()];
const b64 = (key: Buffer) => key.toString('base64');
const POSTGRES = { engine: 'postgres', url: 'postgres://nowhere/db' } as const;

const dirs: string[] = [];
const handles: KeyringHandle[] = [];
afterEach(() => {
  for (const handle of handles.splice(0)) handle.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function databaseIn(): { path: string; keyFile: string; location: { engine: 'sqlite'; path: string } } {
  const dir = mkdtempSync(join(tmpdir(), 'ugs-keys-'));
  dirs.push(dir);
  const path = join(dir, 'ugs.db');
  return { path, keyFile: keyFilePath(path), location: { engine: 'sqlite', path } };
}

describe('UGS_ENCRYPTION_KEY', () => {
  it('takes one key, or a comma-separated list with the current key first (spaces around keys allowed)', () => {
    expect(loadEncryptionKeys(POSTGRES, b64(k1))).toEqual({ keys: [k1], source: { kind: 'environment' } });
    expect(loadEncryptionKeys(POSTGRES, ` ${b64(k2)} , ${b64(k1)}`).keys).toEqual([k2, k1]);
  });

  it('wins over the key file on SQLite, which is then not even created', () => {
    const { location, keyFile } = databaseIn();
    expect(loadEncryptionKeys(location, b64(k1)).keys).toEqual([k1]);
    expect(() => statSync(keyFile)).toThrow(/ENOENT/);
  });

  it.each([
    [
      'a key of 16 bytes',
      b64(Buffer.alloc(16, 1)),
      'UGS_ENCRYPTION_KEY must be the base64 encoding of exactly 32 bytes.',
    ],
    [
      'text that is not base64',
      'this is not a key',
      'UGS_ENCRYPTION_KEY must be the base64 encoding of exactly 32 bytes.',
    ],
    [
      'a bad second key',
      `${b64(k1)},${b64(k2).slice(1)}`,
      'UGS_ENCRYPTION_KEY, key 2 of 2, must be the base64 encoding of exactly 32 bytes.',
    ],
    [
      'an empty entry',
      `${b64(k1)},,${b64(k2)}`,
      'UGS_ENCRYPTION_KEY, key 2 of 3, must be the base64 encoding of exactly 32 bytes.',
    ],
    [
      'a trailing comma',
      `${b64(k1)},`,
      'UGS_ENCRYPTION_KEY, key 2 of 2, must be the base64 encoding of exactly 32 bytes.',
    ],
    [
      'a key listed twice',
      `${b64(k1)},${b64(k2)},${b64(k1)}`,
      `UGS_ENCRYPTION_KEY: key 3 of 3 is the same key as key 1 of 3 (key id ${encryptionKeyId(k1)}); list each key once.`,
    ],
  ])('refuses %s with a message that names the entry and never the key', (_label, value, message) => {
    let error: unknown;
    try {
      loadEncryptionKeys(POSTGRES, value);
    } catch (caught) {
      error = caught;
    }
    expect((error as Error).message).toBe(message);
    for (const key of [k1, k2]) expect((error as Error).message).not.toContain(b64(key));
  });

  it('is required with PostgreSQL', () => {
    expect(() => loadEncryptionKeys(POSTGRES, undefined)).toThrow(/UGS_ENCRYPTION_KEY is required with PostgreSQL/);
    expect(() => loadEncryptionKeys(POSTGRES, '')).toThrow(/UGS_ENCRYPTION_KEY is required with PostgreSQL/);
  });
});

describe('the SQLite key file', () => {
  it('is created on first use with one key and mode 0600, and read the same afterwards', () => {
    const { location, keyFile } = databaseIn();
    const first = loadEncryptionKeys(location, undefined);
    expect(first).toEqual({ keys: [expect.any(Buffer)], source: { kind: 'file', path: keyFile } });
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyFile, 'utf8')).toBe(`${b64(first.keys[0]!)}\n`);
    expect(loadEncryptionKeys(location, undefined).keys).toEqual(first.keys);
  });

  it('holds one key a line, current first; blank lines and surrounding spaces do not count', () => {
    const { location, keyFile } = databaseIn();
    writeFileSync(keyFile, `\n  ${b64(k3)}  \n\n${b64(k2)}\r\n${b64(k1)}`);
    expect(loadEncryptionKeys(location, undefined).keys).toEqual([k3, k2, k1]);
  });

  it.each([
    [
      'a line that is not a key',
      () => `${b64(k1)}\nzz\n`,
      (path: string) => `${path}, line 2, must be the base64 encoding of exactly 32 bytes.`,
    ],
    [
      'a key listed twice',
      () => `${b64(k1)}\n${b64(k2)}\n\n${b64(k2)}\n`,
      (path: string) =>
        `${path}: line 4 is the same key as line 2 (key id ${encryptionKeyId(k2)}); list each key once.`,
    ],
    [
      'no key at all',
      () => '\n \n',
      (path: string) => `${path} holds no key: it must hold the base64 encoding of 32 random bytes.`,
    ],
  ])('refuses %s, naming the file and the line', (_label, content, message) => {
    const { location, keyFile } = databaseIn();
    writeFileSync(keyFile, content());
    expect(() => loadEncryptionKeys(location, undefined)).toThrow(message(keyFile));
  });

  it('is rewritten in one step with mode 0600, whatever mode it had, leaving no temporary file', () => {
    const { location, keyFile } = databaseIn();
    loadEncryptionKeys(location, undefined);
    chmodSync(keyFile, 0o644);
    writeKeyFile(keyFile, [k2, k1]);
    expect(readKeyFile(keyFile)).toEqual([k2, k1]);
    expect(readFileSync(keyFile, 'utf8')).toBe(`${b64(k2)}\n${b64(k1)}\n`);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(keyFile, '..')).sort()).toEqual(['ugs.db.key']);
  });
});

describe('the key file lock', () => {
  it('lets one key command at a time change the key file, and is released afterwards', async () => {
    const { keyFile } = databaseIn();
    await withKeyFileLock(keyFile, async () => {
      expect(readFileSync(`${keyFile}.lock`, 'utf8')).toBe(`${process.pid}\n`);
      await expect(withKeyFileLock(keyFile, async () => 'second')).rejects.toThrow(
        `Another key command (pid ${process.pid}) is changing ${keyFile}`,
      );
    });
    expect(await withKeyFileLock(keyFile, async () => 'after')).toBe('after');
    expect(() => statSync(`${keyFile}.lock`)).toThrow(/ENOENT/);
  });

  it('takes over the lock of a process that is gone', async () => {
    const { keyFile } = databaseIn();
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(`${keyFile}.lock`, `${gone.stdout}\n`);
    expect(await withKeyFileLock(keyFile, async () => 'taken over')).toBe('taken over');
  });
});

describe('a running process and its keys', () => {
  function open(location: { engine: 'sqlite'; path: string }, configured?: string) {
    const events: KeyReload[] = [];
    const handle = openKeyring(location, configured, (event) => events.push(event));
    handles.push(handle);
    return { handle, events };
  }

  it('reads a ciphertext of a key just added to the key file at once, without waiting for the next poll', () => {
    const { location, keyFile } = databaseIn();
    writeFileSync(keyFile, `${b64(k1)}\n`);
    const { handle, events } = open(location);
    writeKeyFile(keyFile, [k2, k1]);
    expect(handle.keyring.decrypt(createKeyring([k2]).encrypt(TOKEN))).toBe(TOKEN);
    expect(handle.keyring.keyId).toBe(encryptionKeyId(k2));
    expect(events).toEqual([{ keyId: encryptionKeyId(k2), keyIds: [encryptionKeyId(k2), encryptionKeyId(k1)] }]);
  });

  it('switches its encryption key when the key file changes, on its own', async () => {
    const { location, keyFile } = databaseIn();
    writeFileSync(keyFile, `${b64(k1)}\n`);
    const { handle } = open(location);
    expect(handle.keyring.keyId).toBe(encryptionKeyId(k1));
    writeKeyFile(keyFile, [k2, k1]);
    await waitFor('the key file to be reloaded', 10_000, () =>
      handle.keyring.keyId === encryptionKeyId(k2) ? true : undefined,
    );
    expect(createKeyring([k2]).decrypt(handle.keyring.encrypt(TOKEN))).toBe(TOKEN);
  });

  it('notices a key file replaced right after it started, even while the thread pool is busy', async () => {
    const { location, keyFile } = databaseIn();
    writeFileSync(keyFile, `${b64(k1)}\n`);
    // Every thread of libuv's pool busy, as in a loaded process: a watcher whose first look at the
    // file waits for the pool takes the replaced file as its starting point and never reports it.
    const busy = Array.from(
      { length: 4 },
      () => new Promise((resolve) => pbkdf2('busy', 'pool', 400_000, 32, 'sha512', resolve)),
    );
    const { handle } = open(location);
    writeKeyFile(keyFile, [k2, k1]);
    await waitFor('the key file to be reloaded', 10_000, () =>
      handle.keyring.keyId === encryptionKeyId(k2) ? true : undefined,
    );
    await Promise.all(busy);
  });

  it('keeps its keys when the key file becomes unreadable, says why, and takes the next good file', async () => {
    const { location, keyFile } = databaseIn();
    writeFileSync(keyFile, `${b64(k1)}\n`);
    const { handle, events } = open(location);
    // Replaced in one step, so that a poll cannot see it half written.
    writeFileSync(`${keyFile}.new`, 'not a key\n');
    renameSync(`${keyFile}.new`, keyFile);
    handle.reload();
    expect(events).toEqual([
      { error: new Error(`${keyFile}, line 1, must be the base64 encoding of exactly 32 bytes.`) },
    ]);
    expect(handle.keyring.keyId).toBe(encryptionKeyId(k1));
    expect(handle.keyring.decrypt(createKeyring([k1]).encrypt(TOKEN))).toBe(TOKEN);
    // A ciphertext under a key it cannot find anywhere is still a clear error.
    expect(() => handle.keyring.decrypt(createKeyring([k3]).encrypt(TOKEN))).toThrow(/not among the configured keys/);

    writeKeyFile(keyFile, [k3, k1]);
    await waitFor('the repaired key file to be reloaded', 10_000, () =>
      handle.keyring.keyId === encryptionKeyId(k3) ? true : undefined,
    );
  });

  it('keeps keys from UGS_ENCRYPTION_KEY for its whole life', () => {
    const { location } = databaseIn();
    const { handle } = open(location, `${b64(k2)},${b64(k1)}`);
    expect(handle.source).toEqual({ kind: 'environment' });
    expect(handle.keyring.keyIds).toEqual([encryptionKeyId(k2), encryptionKeyId(k1)]);
    expect(() => handle.keyring.decrypt(createKeyring([k3]).encrypt(TOKEN))).toThrow(/not among the configured keys/);
  });
});
