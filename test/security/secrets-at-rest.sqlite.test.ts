import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyFilePath } from '../../src/config/encryption-key.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import {
  askForGroup,
  expectHashesStored,
  expectKeyAbsent,
  expectNoTokenAndNoInternals,
  embedTokenLeaks,
  expectRefusedStart,
  leaks,
  makeSecrets,
  privateKeyLeaks,
  webhookSecretLeaks,
  type Secrets,
} from './secrets-at-rest.js';

/* SQLite: the database file, its WAL and the key file beside them. PostgreSQL: secrets-at-rest.postgres.test.ts. */

const SUFFIXES = ['', '-wal', '-shm'] as const;

/** The database file and whichever of its -wal and -shm companions exist, as raw bytes. */
function databaseFiles(databasePath: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const suffix of SUFFIXES) {
    const path = `${databasePath}${suffix}`;
    if (existsSync(path)) files.set(path, readFileSync(path));
  }
  return files;
}

describe('secrets at rest in the SQLite files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ugs-secrets-'));
  let t: TestApp;
  let databasePath: string;
  let secrets: Secrets;

  beforeAll(async () => {
    t = await createTestApp({ dir });
    databasePath = t.databasePath!;
    secrets = await makeSecrets(t);
  });

  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps no token in plain text in the database or its WAL while the app has them open', () => {
    const { userGroupTokens, apiTokens } = secrets;
    const files = databaseFiles(databasePath);
    // The changes of this run are still in the WAL: it must be part of the search.
    expect(files.get(`${databasePath}-wal`)?.length ?? 0).toBeGreaterThan(0);
    expectHashesStored(files, [...userGroupTokens, ...apiTokens]);
    expect(leaks(files, userGroupTokens)).toEqual([]);
    expect(leaks(files, apiTokens)).toEqual([]);
    expect(privateKeyLeaks(files, secrets.signingKeys)).toEqual([]);
    expect(webhookSecretLeaks(files, secrets.webhookSecrets)).toEqual([]);
    expect(embedTokenLeaks(files, secrets.embedTokens)).toEqual([]);
  });

  it('keeps the encryption key in a file of mode 0600 beside the database, not in it', () => {
    const keyFile = keyFilePath(databasePath);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, 'utf8').trim();
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    expectKeyAbsent(databaseFiles(databasePath), key);
  });

  describe('after the app closes the database', () => {
    let copies: string;
    let originalKey: Buffer;

    beforeAll(async () => {
      originalKey = Buffer.from(readFileSync(keyFilePath(databasePath), 'utf8').trim(), 'base64');
      await t.app.close();
      await t.runtime.close();
      copies = mkdtempSync(join(tmpdir(), 'ugs-secrets-copy-'));
    });

    afterAll(() => rmSync(copies, { recursive: true, force: true }));

    /** A copy of the closed database in a directory of its own; with the key file too when asked. */
    function copyDatabase(name: string, withKeyFile: boolean): string {
      const copyDir = join(copies, name);
      rmSync(copyDir, { recursive: true, force: true });
      mkdirSync(copyDir, { recursive: true });
      copyFileSync(databasePath, join(copyDir, 'ugs.db'));
      if (withKeyFile) copyFileSync(keyFilePath(databasePath), keyFilePath(join(copyDir, 'ugs.db')));
      return copyDir;
    }

    /** Opens a copy as a fresh app and asks it for an existing group. */
    async function askCopy(copyDir: string, encryptionKey?: string, requireAllKeys?: boolean) {
      const copy = await createTestApp({ dir: copyDir, requireAllKeys, ...(encryptionKey ? { encryptionKey } : {}) });
      try {
        const group = secrets.live[0]!;
        return { group, ...(await askForGroup(copy, group)) };
      } finally {
        await copy.close();
      }
    }

    it('keeps no token in plain text in the files it leaves behind', () => {
      const { userGroupTokens, apiTokens, live } = secrets;
      const files = databaseFiles(databasePath);
      // Checkpointed: only the current rows remain, so only the live secrets' hashes serve as control.
      expectHashesStored(files, [...live.map((group) => group.token), ...apiTokens]);
      expect(leaks(files, [...userGroupTokens, ...apiTokens])).toEqual([]);
      expect(privateKeyLeaks(files, secrets.signingKeys)).toEqual([]);
      expect(webhookSecretLeaks(files, secrets.webhookSecrets)).toEqual([]);
    });

    it('serves a copy that travels with its key file (control for the next test)', async () => {
      const { group, getOrCreate } = await askCopy(copyDatabase('with-key', true));
      expect(getOrCreate.status).toBe(200);
      expect(getOrCreate.body.user_group.token).toBe(group.token);
    });

    it('cannot produce any token from a copy opened with a different key: it refuses to start, naming key ids only', async () => {
      const otherKey = randomBytes(32).toString('base64');
      const opening = createTestApp({ dir: copyDatabase('refused', false), encryptionKey: otherKey });
      await expectRefusedStart(opening, [
        originalKey.toString('base64'),
        otherKey,
        ...secrets.live.map((group) => group.token),
      ]);
    });

    it('and forced to start, it answers without a token and says nothing of why', async () => {
      const otherKey = randomBytes(32);
      const { group, getOrCreate, update } = await askCopy(
        copyDatabase('other-key', false),
        otherKey.toString('base64'),
        false,
      );
      for (const response of [getOrCreate, update])
        expectNoTokenAndNoInternals(response, [originalKey, otherKey], group);
    });
  });
});
