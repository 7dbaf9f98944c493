import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRuntime } from '../../src/runtime.js';
import { postgresSchemaOf } from '../support/database-reader.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { POSTGRES_URL } from '../support/test-database.js';
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

/*
 * PostgreSQL: what leaves the server as data, a dump of the test's schema as a backup would take it,
 * and that data without UGS_ENCRYPTION_KEY. SQLite's files and key file: secrets-at-rest.sqlite.test.ts.
 */

const run = promisify(execFile);

describe('secrets at rest in PostgreSQL', () => {
  let t: TestApp;
  let secrets: Secrets;
  /** pg_dump of the test's schema: every row, as plain SQL text. */
  let dump: Map<string, Buffer>;

  beforeAll(async () => {
    t = await createTestApp();
    secrets = await makeSecrets(t);
    const schema = postgresSchemaOf(t.db);
    const { stdout } = await run('pg_dump', ['--schema', schema, '--no-owner', '--no-privileges', POSTGRES_URL], {
      encoding: 'buffer',
      maxBuffer: 64 * 1024 * 1024,
    });
    dump = new Map([[`pg_dump --schema ${schema}`, stdout]]);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('dumps the rows it searches (control: the stored hash of every current secret is in the dump)', () => {
    const { apiTokens, live } = secrets;
    // Only the current rows are in a dump: the live groups' tokens and every API token, revoked included.
    expectHashesStored(dump, [...live.map((group) => group.token), ...apiTokens]);
  });

  it('keeps no user group token, current or rotated away, and no API token secret in a dump of the database', () => {
    expect(leaks(dump, secrets.userGroupTokens)).toEqual([]);
    expect(leaks(dump, secrets.apiTokens)).toEqual([]);
    expect(privateKeyLeaks(dump, secrets.signingKeys)).toEqual([]);
    expect(webhookSecretLeaks(dump, secrets.webhookSecrets)).toEqual([]);
    expect(embedTokenLeaks(dump, secrets.embedTokens)).toEqual([]);
  });

  it('keeps the encryption key out of the database', () => {
    expectKeyAbsent(dump, t.db.encryptionKey!);
  });

  it('does not open the database without UGS_ENCRYPTION_KEY', async () => {
    await expect(openRuntime({ databaseUrl: t.db.url, encryptionKey: undefined })).rejects.toThrow(
      /UGS_ENCRYPTION_KEY is required/,
    );
  });

  describe('the same data opened by another instance', () => {
    /** An app of its own on the test's schema, with this key, asking for an existing group. */
    async function askWithKey(encryptionKey: string, requireAllKeys?: boolean) {
      const other = await createTestApp({ database: t.db, encryptionKey, requireAllKeys });
      try {
        const group = secrets.live[0]!;
        return { group, ...(await askForGroup(other, group)) };
      } finally {
        await other.close();
      }
    }

    it('serves the token with the same key (control for the next test)', async () => {
      const { group, getOrCreate } = await askWithKey(t.db.encryptionKey!);
      expect(getOrCreate.status).toBe(200);
      expect(getOrCreate.body.user_group.token).toBe(group.token);
    });

    it('cannot produce any token with a different key: such an instance refuses to start, naming key ids only', async () => {
      const otherKey = randomBytes(32).toString('base64');
      await expectRefusedStart(createTestApp({ database: t.db, encryptionKey: otherKey }), [
        t.db.encryptionKey!,
        otherKey,
        ...secrets.live.map((group) => group.token),
      ]);
    });

    it('and forced to start, it answers without a token and says nothing of why', async () => {
      const otherKey = randomBytes(32);
      const { group, getOrCreate, update } = await askWithKey(otherKey.toString('base64'), false);
      for (const response of [getOrCreate, update]) {
        expectNoTokenAndNoInternals(response, [Buffer.from(t.db.encryptionKey!, 'base64'), otherKey], group);
      }
    });
  });
});
