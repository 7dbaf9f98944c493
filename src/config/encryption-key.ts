import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { ENCRYPTION_KEY_BYTES, encryptionKeyId, generateEncryptionKey } from '../domain/secrets.js';
import type { DatabaseLocation } from './database-url.js';

/** Where the keys come from: UGS_ENCRYPTION_KEY, or (SQLite only) the key file beside the database. */
export type KeySource = { kind: 'environment' } | { kind: 'file'; path: string };

export interface LoadedKeys {
  /** The current key (the one that encrypts) first. */
  keys: Buffer[];
  source: KeySource;
}

/**
 * The keys that encrypt user group tokens at rest: UGS_ENCRYPTION_KEY (base64 keys of 32 bytes,
 * comma-separated, the current one first), or for SQLite a key file beside the database (one base64
 * key a line, the current one first), created with one key and mode 0600 on first use. Keeping the
 * keys out of the database means a copy of the database alone reveals no usable token.
 */
export function loadEncryptionKeys(
  location: DatabaseLocation,
  configured: string | undefined,
  { existingData }: LoadOptions = {},
): LoadedKeys {
  if (configured !== undefined && configured !== '') {
    return { keys: parseEnvironmentKeys(configured), source: { kind: 'environment' } };
  }
  if (location.engine !== 'sqlite') {
    throw new Error(
      'UGS_ENCRYPTION_KEY is required with PostgreSQL: set it to the base64 of 32 random bytes (ugs keys generate, or openssl rand -base64 32).',
    );
  }
  const path = keyFilePath(location.path);
  if (existingData === undefined) createKeyFileIfMissing(path);
  else if (!existsSync(path)) throw missingKeyFile(location.path, path, existingData);
  return { keys: readKeyFile(path), source: { kind: 'file', path } };
}

export interface LoadOptions {
  /**
   * The key ids a SQLite database that already exists holds ciphertexts under (perhaps none). Its
   * key file is then never made anew: a new key would open none of its data, and a key file written
   * beside a restored database would stand in the way of the one that belongs to it.
   */
  existingData?: ReadonlyArray<{ keyId: string; count: number }>;
}

function missingKeyFile(
  databasePath: string,
  path: string,
  existingData: ReadonlyArray<{ keyId: string; count: number }>,
): Error {
  const held =
    existingData.length === 0
      ? 'no encrypted data yet'
      : `tokens encrypted under key ${existingData.map((key) => `${key.keyId} (${key.count} ciphertexts)`).join(', ')}`;
  return new Error(
    `${databasePath} exists and holds ${held}, but its key file ${path} is missing. ` +
      'Put back the key file the database was written with (or set UGS_ENCRYPTION_KEY to its keys); ' +
      'no key file was created and nothing was written.',
  );
}

export function keyFilePath(databasePath: string): string {
  return `${databasePath}.key`;
}

/** The variable holding the keys (never a flag: a flag would show in the process list). */
export const ENCRYPTION_KEY_VARIABLE = 'UGS_ENCRYPTION_KEY';

function parseEnvironmentKeys(value: string): Buffer[] {
  const entries = value.split(',');
  const label = (index: number) => (entries.length === 1 ? undefined : `key ${index + 1} of ${entries.length}`);
  return decodeKeys(
    ENCRYPTION_KEY_VARIABLE,
    entries.map((text, index) => ({ text: text.trim(), label: label(index) })),
  );
}

/** The keys of a key file, current first; blank lines are ignored. Throws a message naming the line at fault. */
export function readKeyFile(path: string): Buffer[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  return decodeKeys(
    path,
    lines
      .map((text, index) => ({ text: text.trim(), label: `line ${index + 1}` }))
      .filter((entry) => entry.text !== ''),
  );
}

interface KeyEntry {
  text: string;
  /** Which entry of its source, for messages (never the key itself); none for a source of one entry. */
  label: string | undefined;
}

function decodeKeys(source: string, entries: KeyEntry[]): Buffer[] {
  if (entries.length === 0)
    throw new Error(
      `${source} holds no key: it must hold the base64 encoding of ${ENCRYPTION_KEY_BYTES} random bytes.`,
    );
  const seen = new Map<string, { label: string | undefined; key: Buffer }>();
  return entries.map(({ text, label }) => {
    const key = Buffer.from(text, 'base64');
    if (key.length !== ENCRYPTION_KEY_BYTES || key.toString('base64') !== text.replace(/\s/g, '')) {
      throw new Error(
        `${label === undefined ? source : `${source}, ${label},`} must be the base64 encoding of exactly ${ENCRYPTION_KEY_BYTES} bytes.`,
      );
    }
    const keyId = encryptionKeyId(key);
    const earlier = seen.get(keyId);
    if (earlier) {
      const problem = earlier.key.equals(key) ? 'the same key as' : 'another key with the same key id as';
      throw new Error(`${source}: ${label} is ${problem} ${earlier.label} (key id ${keyId}); list each key once.`);
    }
    seen.set(keyId, { label, key });
    return key;
  });
}

function createKeyFileIfMissing(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    // 'wx' fails if the file exists, so concurrent first starts agree on one key.
    writeFileSync(path, keyFileText([generateEncryptionKey()]), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

const keyFileText = (keys: readonly Buffer[]) => keys.map((key) => `${key.toString('base64')}\n`).join('');

/**
 * Replaces the key file in one step: a reader (a server reloading it) sees the old file or the new
 * one, never a part. The new file has mode 0600 whatever the old one had.
 */
export function writeKeyFile(path: string, keys: readonly Buffer[]): void {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, keyFileText(keys));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
  // The rename is durable only once the directory entry is on disk.
  const directory = openSync(dirname(path), 'r');
  try {
    fsyncSync(directory);
  } finally {
    closeSync(directory);
  }
}
