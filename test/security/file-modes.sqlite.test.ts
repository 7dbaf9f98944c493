// The SQLite database, its WAL and shared-memory files and the key file are created for
// their owner only (0600), and a directory the service creates 0700, whatever the umask allows.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openRuntime } from '../../src/runtime.js';

const root = mkdtempSync(join(tmpdir(), 'ugs-modes-'));
const previousUmask = process.umask(0o022);

afterAll(() => {
  process.umask(previousUmask);
  rmSync(root, { recursive: true, force: true });
});

const modeOf = (path: string) => (statSync(path).mode & 0o777).toString(8);

it('creates the directories 0700 and the database, its WAL, its shared memory and its key file 0600', async () => {
  const directory = join(root, 'data', 'ugs');
  const database = join(directory, 'ugs.db');
  const runtime = await openRuntime({ databaseUrl: `sqlite:${database}`, encryptionKey: undefined });
  try {
    // A write, so that the WAL and shared-memory files exist.
    const caller = {
      tenant: { workspaceId: runtime.defaultWorkspace.id, environment: 'Customer' as const },
      scope: 'admin' as const,
      actor: { type: 'cli' as const },
      requestId: null,
    };
    await runtime.services.userGroups.getOrCreateUserGroup(caller, { userGroupId: 'private' });
    expect({
      [join(root, 'data')]: modeOf(join(root, 'data')),
      [directory]: modeOf(directory),
      [database]: modeOf(database),
      [`${database}-wal`]: modeOf(`${database}-wal`),
      [`${database}-shm`]: modeOf(`${database}-shm`),
      [`${database}.key`]: modeOf(`${database}.key`),
    }).toEqual({
      [join(root, 'data')]: '700',
      [directory]: '700',
      [database]: '600',
      [`${database}-wal`]: '600',
      [`${database}-shm`]: '600',
      [`${database}.key`]: '600',
    });
  } finally {
    await runtime.close();
  }
});
