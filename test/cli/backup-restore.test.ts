// `ugs backup` while a server serves and writes, `ugs restore` into the stopped deployment, and what
// each refuses (a running server, keys that do not open the backup, a damaged copy, PostgreSQL).
import { copyFileSync, existsSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanUp, sandbox, type Sandbox } from '../support/cli-sandbox.js';
import { keyIdOf, newKey } from '../support/encryption-keys.js';
import { folderSnapshot } from '../support/folder-snapshot.js';
import type { ServeProcess } from '../support/serve-process.js';
import { expectCleanFailure, jsonOutput, runUgs } from '../support/ugs-command.js';
import { userGroupApi } from '../support/user-group-api.js';
import { clientFor } from '../support/http-client.js';

afterEach(cleanUp);

interface Acknowledged {
  id: string;
  /** The group's token as of its last acknowledged write. */
  token: string;
  /** The token it had before a rotation, when one was acknowledged. */
  before?: string;
  /** Whether the last write's answer arrived before `ugs backup` was started. */
  beforeBackup: boolean;
}

/**
 * A steady write load over HTTP: each round creates a group, then rotates its token. Runs until
 * `stop()`, recording every acknowledged write and whether its answer came before `backupStarted`.
 */
function writeLoad(server: ServeProcess, admin: string) {
  const api = userGroupApi(clientFor(server), admin);
  const groups = new Map<string, Acknowledged>();
  let backupStarted = false;
  let running = true;
  let acknowledged = 0;
  const done = (async () => {
    for (let round = 0; running; round++) {
      const id = `load_${round}`;
      const created = await api.getOrCreate({ user_group_id: id });
      expect(created.status, created.raw).toBe(200);
      acknowledged += 1;
      const first = created.body.user_group.token as string;
      groups.set(id, { id, token: first, beforeBackup: !backupStarted });
      const rotated = await api.rotate(first);
      expect(rotated.status, rotated.raw).toBe(200);
      acknowledged += 1;
      groups.set(id, {
        id,
        token: rotated.body.user_group.token as string,
        before: first,
        beforeBackup: !backupStarted,
      });
    }
  })();
  return {
    groups,
    acknowledged: () => acknowledged,
    markBackupStarted: () => (backupStarted = true),
    async stop() {
      running = false;
      await done;
    },
  };
}

/** `ugs backup <file> --json` on the sandbox's database. */
async function backup(box: Sandbox, file: string) {
  return jsonOutput<{ file: string; bytes: number; integrity: string; key_ids: string[] }>(
    await box.ugs('backup', file, '--json'),
  );
}

/** A stopped deployment with one group, and a backup of it. */
async function backedUpDeployment(): Promise<{ box: Sandbox; file: string; key: string }> {
  const box = sandbox();
  const server = await box.serve();
  await userGroupApi(clientFor(server), server.adminTokens().Customer).getOrCreate({ user_group_id: 'kept' });
  const file = join(box.dir, 'backup.db');
  await backup(box, file);
  expect(await server.stop()).toBe(0);
  return { box, file, key: readFileSync(`${box.databasePath}.key`, 'utf8').trim() };
}

describe('ugs backup and ugs restore on SQLite', () => {
  it('a backup taken under a steady write load, restored into the stopped deployment, holds every write acknowledged before it began; the group tokens of then authenticate', async () => {
    const box = sandbox();
    const server = await box.serve();
    const admin = server.adminTokens().Customer;
    const load = writeLoad(server, admin);
    while (load.acknowledged() < 40) await new Promise((resolve) => setTimeout(resolve, 20));

    const file = join(box.dir, 'backups', 'ugs-backup.db');
    load.markBackupStarted();
    const atStart = load.acknowledged();
    // A process of its own, as an operator runs it: in this one, the backup's synchronous steps would
    // hold back the event loop that counts the load's acknowledgements.
    const made = jsonOutput<{ file: string; bytes: number; integrity: string; key_ids: string[] }>(
      await runUgs(['backup', file, '--json', '--database', box.databaseUrl]),
    );
    const duringBackup = load.acknowledged() - atStart;
    const atEnd = load.acknowledged();
    while (load.acknowledged() < atEnd + 10) await new Promise((resolve) => setTimeout(resolve, 20));
    await load.stop();

    // The server kept writing while the backup ran; the copy is whole, 0600, and names its key.
    expect(duringBackup).toBeGreaterThan(0);
    const key = readFileSync(`${box.databasePath}.key`, 'utf8').trim();
    expect(made).toMatchObject({ file, integrity: 'ok', key_ids: [keyIdOf(key)] });
    expect(statSync(file).mode & 0o777).toBe(0o600);

    expect(await server.stop()).toBe(0);
    const restored = await box.ugs('restore', file);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(/^restored .* start the server\n$/);
    expect(existsSync(`${box.databasePath}-wal`)).toBe(false);

    const again = await box.serve();
    const api = userGroupApi(clientFor(again), admin);
    const before = [...load.groups.values()].filter((group) => group.beforeBackup);
    expect(before.length).toBeGreaterThanOrEqual(20);
    for (const group of before) {
      const found = await api.getOrCreate({ user_group_id: group.id });
      expect(found.body, group.id).toMatchObject({ new_user_group: false, user_group: { token: group.token } });
      expect((await api.verify(group.token)).status, group.id).toBe(200);
      if (group.before) expect((await api.verify(group.before)).status, group.id).toBe(404);
    }
    // What was written once the backup had finished is gone: the restore put the copy in place.
    const last = [...load.groups.values()].at(-1)!;
    expect((await api.verify(last.token)).status).toBe(404);
  });

  it('restore refuses while a server has the database open, and changes nothing', async () => {
    const { box, file } = await backedUpDeployment();
    const server = await box.serve();
    expectCleanFailure(await box.ugs('restore', file), /is in use \(a server or another command has it open\)/);
    expect((await server.request({ method: 'GET', path: '/readyz' })).status).toBe(200);
  });

  it('restore refuses keys that do not open the backup, and a missing key file, before writing anything', async () => {
    const { box, file, key } = await backedUpDeployment();
    const before = folderSnapshot(box.dir);
    const wrong = newKey();
    expectCleanFailure(
      await box.ugsWith({ UGS_ENCRYPTION_KEY: wrong }, 'restore', file),
      new RegExp(
        `key ${keyIdOf(key)} \\(\\d+ ciphertexts\\), which the configured keys \\(${keyIdOf(wrong)}\\) do not include.* Nothing was changed\\.`,
      ),
    );
    expect(folderSnapshot(box.dir)).toEqual(before);

    // A new deployment: the key file must be put in place first; none is made.
    const fresh = sandbox();
    expectCleanFailure(
      await fresh.ugs('restore', file),
      new RegExp(`needs the encryption keys ${keyIdOf(key)}: put the key file they are in at .*ugs\\.db\\.key first`),
    );
    expect(folderSnapshot(fresh.dir)).toEqual([]);
    writeFileSync(`${fresh.databasePath}.key`, `${key}\n`, { mode: 0o600 });
    const restored = await fresh.ugs('restore', file);
    expect(restored.code, restored.stderr).toBe(0);
    expect(statSync(fresh.databasePath).mode & 0o777).toBe(0o600);
    expect((await fresh.ugs('groups', 'list', '--json')).stdout).toContain('"kept"');
  });

  it('restore refuses a damaged copy after checking its integrity; backup never overwrites a file', async () => {
    const { box, file } = await backedUpDeployment();
    const damaged = join(box.dir, 'damaged.db');
    copyFileSync(file, damaged);
    truncateSync(damaged, Math.floor(statSync(file).size / 2));
    const before = folderSnapshot(box.dir);
    expectCleanFailure(await box.ugs('restore', damaged), /integrity check|not a readable SQLite database|malformed/);
    expect(folderSnapshot(box.dir)).toEqual(before);

    expectCleanFailure(await box.ugs('backup', file), /already exists: a backup never overwrites a file/);
    rmSync(damaged);
  });
});

describe('ugs backup and ugs restore on PostgreSQL', () => {
  it('name pg_dump and pg_restore with the keyring, do nothing and exit non-zero', async () => {
    const box = sandbox();
    const database = 'postgres://ugs@127.0.0.1:1/ugs';
    const file = join(box.dir, 'backup.db');
    expectCleanFailure(
      await runUgs(['backup', file, '--database', database]),
      /ugs backup works on SQLite only; nothing was done\. On PostgreSQL use pg_dump .*UGS_ENCRYPTION_KEY/,
    );
    expectCleanFailure(
      await runUgs(['restore', file, '--database', database]),
      /ugs restore works on SQLite only; nothing was done\. On PostgreSQL use pg_restore .*UGS_ENCRYPTION_KEY/,
    );
    expect(folderSnapshot(box.dir)).toEqual([]);
  });
});
