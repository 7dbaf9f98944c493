// A server or command started with keys that cannot decrypt the database's ciphertexts
// refuses to start, naming the key ids it found and the ones it has, instead of serving 500s.
// (The CLI's side, serve included, on SQLite with the key file: test/cli/keys.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MissingEncryptionKeysError } from '../../src/domain/encryption-keys/key-rotation.service.js';
import { openRuntime } from '../../src/runtime.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../support/test-database.js';
import { keyIdOf, newKey } from '../support/encryption-keys.js';

describe(`a database whose tokens are under a key the process lacks (${TEST_ENGINE})`, () => {
  let db: TestDatabase;
  const [writtenWith, other] = [newKey(), newKey()];
  const open = (encryptionKey: string, requireAllKeys?: boolean) =>
    openRuntime({ databaseUrl: db.url, encryptionKey, requireAllKeys });

  beforeAll(async () => {
    db = await createTestDatabase(TEST_ENGINE);
    const runtime = await open(writtenWith);
    const caller = {
      tenant: { workspaceId: runtime.defaultWorkspace.id, environment: 'Customer' as const },
      scope: 'admin' as const,
      actor: { type: 'cli' as const },
      requestId: null,
    };
    for (const id of ['a', 'b', 'c'])
      await runtime.services.userGroups.getOrCreateUserGroup(caller, { userGroupId: id });
    await runtime.close();
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('is refused at start, naming the key ids found and configured', async () => {
    const refused = open(other);
    await expect(refused).rejects.toBeInstanceOf(MissingEncryptionKeysError);
    await expect(refused).rejects.toThrow(
      `key ${keyIdOf(writtenWith)} (3 ciphertexts), which the configured keys (${keyIdOf(other)}) do not include`,
    );
  });

  it('opens with the missing key added, and for the key commands that handle it', async () => {
    for (const runtime of [await open(`${other},${writtenWith}`), await open(other, false)]) {
      const usage = await runtime.services.keyRotation.keyUsage();
      expect(usage.find((key) => key.keyId === keyIdOf(writtenWith))?.ciphertexts.user_group_token).toBe(3);
      await runtime.close();
    }
  });
});
