import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyFilePath } from '../../src/config/encryption-key.js';
import { encryptionKeyId, hashSecret } from '../../src/domain/secrets.js';
import { inject, type ApiRequest } from '../support/http-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createUserGroup, expectFailure, issueApiToken, tenantOf } from './helpers.js';

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

/** The forms a secret could take if written in the clear: itself, its 64-hex body, the raw bytes of that body. */
function plaintextForms(secret: string): Buffer[] {
  const body = /[0-9a-f]{64}$/.exec(secret)?.[0];
  if (!body) throw new Error(`not a token: ${secret}`);
  return [Buffer.from(secret, 'utf8'), Buffer.from(body, 'utf8'), Buffer.from(body, 'hex')];
}

/** Secrets found in any of the files, with where: empty when nothing leaked. */
function leaks(files: Map<string, Buffer>, secrets: string[]): string[] {
  const found: string[] = [];
  for (const [path, bytes] of files) {
    for (const secret of secrets) {
      if (plaintextForms(secret).some((form) => bytes.includes(form))) found.push(`${secret} in ${path}`);
    }
  }
  return found;
}

/** Positive control: the lookup hash of every secret is stored, so the byte search does see the data. */
function expectHashesStored(files: Map<string, Buffer>, secrets: string[]): void {
  const all = Buffer.concat([...files.values()]);
  const missing = secrets.filter((secret) => !all.includes(Buffer.from(hashSecret(secret), 'utf8')));
  expect(missing).toEqual([]);
}

describe('secrets at rest', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ugs-secrets-'));
  let t: TestApp;
  let databasePath: string;
  const userGroupTokens: string[] = [];
  const apiTokens: string[] = [];
  const live: Array<{ id: string; token: string }> = [];

  const call = (req: ApiRequest) => inject(t.app, req);

  beforeAll(async () => {
    t = await createTestApp({ dir });
    databasePath = t.databasePath;
    const write = t.tokens.default.Customer.write;
    for (let i = 0; i < 12; i += 1) {
      const group = await createUserGroup(call, write, { user_group_id: `secret-${i}`, properties: { n: i } });
      userGroupTokens.push(group.token);
      let token = group.token;
      // Rotate a third of them twice and a third once: the rotated-away tokens must not linger either.
      for (let r = 0; r < i % 3; r += 1) {
        const rotated = await call({ method: 'POST', path: '/api/user', token: write, body: { current_token: token } });
        expect(rotated.status).toBe(200);
        token = rotated.body.user_group.token as string;
        userGroupTokens.push(token);
      }
      live.push({ id: group.provided_id, token });
    }
    const deleted = await call({ method: 'DELETE', path: '/api/user', token: write, body: { user_group_id: 'secret-0' } });
    expect(deleted.status).toBe(200);
    live.shift();

    apiTokens.push(...Object.values(t.tokens).flatMap((set) => Object.values(set).flatMap((scopes) => Object.values(scopes))));
    const tenant = await tenantOf(t, 'default', 'Testing');
    apiTokens.push(await issueApiToken(t, tenant, 'write', 'at-rest'));
    const revoked = await issueApiToken(t, tenant, 'read', 'to revoke');
    apiTokens.push(revoked);
    const [record] = (await t.runtime.store.listApiTokens(tenant.workspaceId)).filter((token) => token.name === 'to revoke');
    await t.runtime.services.apiTokens.revokeApiToken({ tenant, scope: 'admin', actor: { type: 'cli' }, requestId: null }, record!.id);
  });

  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps no token in plain text in the database or its WAL while the app has them open', () => {
    const files = databaseFiles(databasePath);
    // The changes of this run are still in the WAL: it must be part of the search.
    expect(files.get(`${databasePath}-wal`)?.length ?? 0).toBeGreaterThan(0);
    expectHashesStored(files, [...userGroupTokens, ...apiTokens]);
    expect(leaks(files, userGroupTokens)).toEqual([]);
    expect(leaks(files, apiTokens)).toEqual([]);
  });

  it('keeps the encryption key in a file of mode 0600 beside the database, not in it', () => {
    const keyFile = keyFilePath(databasePath);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const key = readFileSync(keyFile, 'utf8').trim();
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    const all = Buffer.concat([...databaseFiles(databasePath).values()]);
    expect(all.includes(Buffer.from(key, 'utf8'))).toBe(false);
    expect(all.includes(Buffer.from(key, 'base64'))).toBe(false);
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

    /** Opens a copy as a fresh app and asks it for an existing group, by get-or-create and by update. */
    async function askCopy(copyDir: string, encryptionKey?: string) {
      const copy = await createTestApp({ dir: copyDir, ...(encryptionKey ? { encryptionKey } : {}) });
      try {
        const [group] = live;
        const token = copy.tokens.default.Customer.write;
        const getOrCreate = await inject(copy.app, { method: 'GET', path: '/api/user', token, body: { user_group_id: group!.id } });
        const update = await inject(copy.app, { method: 'PUT', path: '/api/user', token, body: { user_group_id: group!.id, name: 'changed' } });
        return { group: group!, getOrCreate, update };
      } finally {
        await copy.close();
      }
    }

    it('keeps no token in plain text in the files it leaves behind', () => {
      const files = databaseFiles(databasePath);
      // Checkpointed: only the current rows remain, so only the live secrets' hashes serve as control.
      expectHashesStored(files, [...live.map((group) => group.token), ...apiTokens]);
      expect(leaks(files, [...userGroupTokens, ...apiTokens])).toEqual([]);
    });

    it('serves a copy that travels with its key file (control for the next test)', async () => {
      const { group, getOrCreate } = await askCopy(copyDatabase('with-key', true));
      expect(getOrCreate.status).toBe(200);
      expect(getOrCreate.body.user_group.token).toBe(group.token);
    });

    it('cannot produce any token from a copy opened with a different key, and says nothing of why', async () => {
      const otherKey = randomBytes(32);
      const { group, getOrCreate, update } = await askCopy(copyDatabase('other-key', false), otherKey.toString('base64'));
      for (const response of [getOrCreate, update]) {
        expectFailure(response, 500, 'internal_error');
        expect(Object.keys(response.body.error).sort()).toEqual(['code', 'message', 'request_id']);
        const { message } = response.body.error as { message: string };
        expect(message).not.toMatch(/decrypt|cipher|key|aes|gcm|auth tag|\bat\s|\.ts\b|\.js\b|\//i);
        for (const internal of [encryptionKeyId(originalKey), encryptionKeyId(otherKey), 'stack', 'Error', group.token]) {
          expect(response.raw).not.toContain(internal);
        }
        expect(response.raw).not.toMatch(/ugt_[0-9a-f]{64}/);
      }
    });
  });
});
