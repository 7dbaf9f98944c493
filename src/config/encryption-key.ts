import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { ENCRYPTION_KEY_BYTES } from '../domain/secrets.js';
import type { DatabaseLocation } from './database-url.js';

/**
 * The key that encrypts user group tokens at rest: UGS_ENCRYPTION_KEY (base64 of 32 bytes), or for
 * SQLite a key file beside the database, created on first use with mode 0600. Keeping the key out
 * of the database means a copy of the database alone reveals no usable token.
 */
export function loadEncryptionKey(location: DatabaseLocation, configured: string | undefined): Buffer {
  if (configured !== undefined && configured !== '') return decodeKey(configured, 'UGS_ENCRYPTION_KEY');
  if (location.engine !== 'sqlite') {
    throw new Error('UGS_ENCRYPTION_KEY is required with PostgreSQL: set it to the base64 of 32 random bytes (openssl rand -base64 32).');
  }
  return loadOrCreateKeyFile(keyFilePath(location.path));
}

export function keyFilePath(databasePath: string): string {
  return `${databasePath}.key`;
}

function loadOrCreateKeyFile(path: string): Buffer {
  mkdirSync(dirname(path), { recursive: true });
  try {
    // 'wx' fails if the file exists, so concurrent first starts agree on one key.
    writeFileSync(path, `${randomBytes(ENCRYPTION_KEY_BYTES).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return decodeKey(readFileSync(path, 'utf8').trim(), path);
}

function decodeKey(base64: string, source: string): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== ENCRYPTION_KEY_BYTES || key.toString('base64') !== base64.replace(/\s/g, '')) {
    throw new Error(`${source} must be the base64 encoding of exactly ${ENCRYPTION_KEY_BYTES} bytes.`);
  }
  return key;
}
