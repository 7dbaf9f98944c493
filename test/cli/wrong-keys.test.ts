// A start or command whose keys cannot open the database refuses before writing anything: no key
// file made beside an existing database, no migration applied, no file of the folder created or changed.
import { readFileSync, rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanUp, sandbox, type Sandbox } from '../support/cli-sandbox.js';
import { keyIdOf, newKey } from '../support/encryption-keys.js';
import { folderSnapshot } from '../support/folder-snapshot.js';
import { expectCleanFailure } from '../support/ugs-command.js';
import { getOrCreate } from '../support/user-group-api.js';

afterEach(cleanUp);

/** A stopped deployment whose database holds three group tokens under its key file's key. */
async function stoppedDeploymentWithGroups(): Promise<{ box: Sandbox; key: string }> {
  const box = sandbox();
  const server = await box.serve();
  const admin = server.adminTokens().Customer;
  for (const id of ['a', 'b', 'c']) expect((await getOrCreate(server, admin, { user_group_id: id })).status).toBe(200);
  expect(await server.stop()).toBe(0);
  return { box, key: readFileSync(`${box.databasePath}.key`, 'utf8').trim() };
}

describe('keys that do not match the database', () => {
  it('a wrong UGS_ENCRYPTION_KEY: serve and a command refuse, naming both key ids, and leave the folder as it was', async () => {
    const { box, key } = await stoppedDeploymentWithGroups();
    const wrong = newKey();
    const before = folderSnapshot(box.dir);
    const refusal = new RegExp(
      `key ${keyIdOf(key)} \\(3 ciphertexts\\), which the configured keys \\(${keyIdOf(wrong)}\\) do not include`,
    );
    for (const args of [['serve', '--port', '0'], ['groups', 'list'], ['migrate']])
      expectCleanFailure(await box.ugsWith({ UGS_ENCRYPTION_KEY: wrong }, ...args), refusal);
    expect(folderSnapshot(box.dir)).toEqual(before);
  });

  it('a missing key file: serve and a command refuse, naming the key ids the database needs, and create no key file', async () => {
    const { box, key } = await stoppedDeploymentWithGroups();
    rmSync(`${box.databasePath}.key`);
    const before = folderSnapshot(box.dir);
    const refusal = new RegExp(
      `holds tokens encrypted under key ${keyIdOf(key)} \\(3 ciphertexts\\), but its key file .*ugs\\.db\\.key is missing`,
    );
    for (const args of [
      ['serve', '--port', '0'],
      ['groups', 'list'],
      ['keys', 'list'],
    ])
      expectCleanFailure(await box.ugs(...args), refusal);
    expect(folderSnapshot(box.dir)).toEqual(before);
  });
});
