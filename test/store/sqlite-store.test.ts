import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { migrateSqlite } from '../../src/store/sqlite/migrate.js';
import { MIGRATIONS } from '../../src/store/sqlite/migrations/index.js';

import { openSqliteDatabase, PAGE_CACHE_KIB, SYNC_BUSY_WAIT_MS } from '../../src/store/sqlite/sqlite-database.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/domain/store.port.js';
import { describeStoreContract } from './store.contract.js';
import { createChain, raceForCycle } from './contract/user-group-tree.contract.js';
import {
  auditContext,
  expectAppError,
  expectLegacyKeyMigrated,
  newApiToken,
  newGroup,
  seed,
  T2,
} from './store-fixtures.js';

const stepsOf = (kind: 'expand' | 'contract') => MIGRATIONS.filter((migration) => migration.kind === kind);

const run = promisify(execFile);
const MIGRATE_PROCESS = fileURLToPath(new URL('./migrate-process.ts', import.meta.url));

async function freshDatabasePath(): Promise<{ file: string; cleanup: () => Promise<void> }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ugs-store-'));
  // A missing parent directory is part of what openSqliteStore must handle.
  return { file: path.join(dir, 'nested', 'ugs.db'), cleanup: () => fs.rm(dir, { recursive: true, force: true }) };
}

/** The contract's template on SQLite: the migrated, seeded file (closed, so its WAL is folded in), copied per test. */
let templateFile: string | undefined;
describeStoreContract(
  'sqlite',
  async () => {
    const { file, cleanup } = await freshDatabasePath();
    return { store: openSqliteStore({ path: file }), cleanup };
  },
  {
    create: async () => {
      const { file, cleanup } = await freshDatabasePath();
      templateFile = file;
      return { store: openSqliteStore({ path: file }), cleanup };
    },
    copy: async () => {
      const { file, cleanup } = await freshDatabasePath();
      await fs.mkdir(path.dirname(file), { recursive: true });
      for (const suffix of ['', '-wal'])
        await fs.copyFile(`${templateFile!}${suffix}`, `${file}${suffix}`).catch((error: NodeJS.ErrnoException) => {
          if (suffix === '' || error.code !== 'ENOENT') throw error;
        });
      return { store: openSqliteStore({ path: file }), cleanup };
    },
  },
);

describe('SQLite store specifics', () => {
  let file: string;
  let cleanup: () => Promise<void>;
  const opened: Store[] = [];
  const raw: Database.Database[] = [];

  const open = (busyTimeoutMs?: number): Store => {
    const store = openSqliteStore({ path: file, busyTimeoutMs });
    opened.push(store);
    return store;
  };

  const openRaw = (): Database.Database => {
    const db = new Database(file);
    raw.push(db);
    return db;
  };

  beforeEach(async () => {
    ({ file, cleanup } = await freshDatabasePath());
  });

  afterEach(async () => {
    for (const db of raw.splice(0)) db.close();
    for (const store of opened.splice(0)) await store.close();
    await cleanup();
  });

  it('opens connections with WAL, synchronous FULL, foreign keys, a 64 MiB page cache and a short synchronous busy wait', async () => {
    const db = openSqliteDatabase({ path: file, busyTimeoutMs: 1234 });
    raw.push(db);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('cache_size', { simple: true })).toBe(-PAGE_CACHE_KIB);
    // The connection blocks only briefly; the store retries asynchronously up to busyTimeoutMs.
    expect(db.pragma('busy_timeout', { simple: true })).toBe(SYNC_BUSY_WAIT_MS);
  });

  it("makes the signing keys of a database from before migration 9 Customer's", async () => {
    await fs.mkdir(path.dirname(file), { recursive: true });
    const db = openRaw();
    migrateSqlite(
      db,
      MIGRATIONS.filter((migration) => migration.version < 9),
    );
    const workspaceId = db.prepare("INSERT INTO workspaces (name, created_at) VALUES ('legacy', ?)").run(T2)
      .lastInsertRowid as number;
    db.prepare(
      "INSERT INTO signing_keys (workspace_id, kid, public_jwk, private_key_ciphertext, created_at) VALUES (?, 'legacy-kid', '{}', 'v1.x', ?)",
    ).run(workspaceId, T2);
    await expectLegacyKeyMigrated(open(), workspaceId);
  });

  it('keeps the idempotency keys of a database from before migration 18, ids and all, and wants one owner per key', async () => {
    await fs.mkdir(path.dirname(file), { recursive: true });
    const db = openRaw();
    db.pragma('foreign_keys = ON');
    migrateSqlite(
      db,
      MIGRATIONS.filter((migration) => migration.version < 18),
    );
    const workspaceId = db.prepare("INSERT INTO workspaces (name, created_at) VALUES ('legacy', ?)").run(T2)
      .lastInsertRowid as number;
    const tokenId = db
      .prepare(
        "INSERT INTO api_tokens (workspace_id, environment, name, token_hash, scope, created_at) VALUES (?, 'Customer', 'legacy', 'hash', 'write', ?)",
      )
      .run(workspaceId, T2).lastInsertRowid as number;
    db.prepare(
      "INSERT INTO idempotency_keys (id, api_token_id, key_hash, fingerprint, created_at, response) VALUES (41, ?, 'k', 'f', ?, 'v1.sealed')",
    ).run(tokenId, T2);
    migrateSqlite(db, MIGRATIONS);
    expect(db.prepare('SELECT id, api_token_id, person_key, key_hash, response FROM idempotency_keys').all()).toEqual([
      { id: 41, api_token_id: tokenId, person_key: null, key_hash: 'k', response: 'v1.sealed' },
    ]);
    const insert = db.prepare(
      "INSERT INTO idempotency_keys (api_token_id, person_key, key_hash, fingerprint, created_at) VALUES (?, ?, 'k2', 'f', ?)",
    );
    expect(() => insert.run(null, null, T2)).toThrow(/CHECK/);
    expect(() => insert.run(tokenId, '[1,"i","s"]', T2)).toThrow(/CHECK/);
    // An API token still takes its keys with it; a person's key stands alone.
    insert.run(null, '[1,"i","s"]', T2);
    db.prepare('DELETE FROM api_tokens WHERE id = ?').run(tokenId);
    expect(db.prepare('SELECT person_key FROM idempotency_keys').pluck().all()).toEqual(['[1,"i","s"]']);
  });

  it('migrates a fresh file, records the version, and a second migrate is a no-op', async () => {
    const store = open();
    await store.migrate();
    await store.migrate();
    await open().migrate();
    const rows = openRaw().prepare('SELECT version, name FROM schema_migrations ORDER BY version').all();
    expect(rows).toEqual(stepsOf('contract').map(({ version, name }) => ({ version, name })));
    const expansions = openRaw().prepare('SELECT version, name FROM schema_expansions ORDER BY version').all();
    expect(expansions).toEqual(stepsOf('expand').map(({ version, name }) => ({ version, name })));
  });

  it('migrates safely from several processes at once', async () => {
    const startAt = Date.now() + 1500;
    const outputs = await Promise.all(
      Array.from({ length: 6 }, () =>
        run(process.execPath, ['--import', 'tsx', MIGRATE_PROCESS, file, String(startAt)]).then(({ stdout }) => stdout),
      ),
    );
    expect(outputs.map((output) => JSON.parse(output) as { created: boolean }).filter((o) => o.created)).toHaveLength(
      1,
    );
    const db = openRaw();
    expect(db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all()).toEqual(
      stepsOf('contract').map(({ version }) => version),
    );
    expect(db.prepare('SELECT version FROM schema_expansions ORDER BY version').pluck().all()).toEqual(
      stepsOf('expand').map(({ version }) => version),
    );
    expect(db.prepare("SELECT count(*) FROM audit_events WHERE action = 'workspace.created'").pluck().get()).toBe(1);
  });

  it('refuses a database newer than the code', async () => {
    await open().migrate();
    openRaw().prepare("INSERT INTO schema_migrations VALUES (999, 'future', '2030-01-01T00:00:00.000Z')").run();
    await expect(open().migrate()).rejects.toThrow(/newer than this program/);
  });

  it('shows one instance the writes of another on the same file at once', async () => {
    const writer = open();
    await writer.migrate();
    const { customer } = await seed(writer);
    const reader = open();
    const { group } = await writer.insertUserGroupIfAbsent(newGroup(customer, 'shared'), auditContext());
    expect(await reader.findUserGroupByTokenHash(customer, group.tokenHash)).toEqual(group);
    await reader.deleteUserGroup(customer, group.teamId, group.version, auditContext());
    expect(await writer.findUserGroupByProvidedId(customer, 'shared')).toBeNull();
  });

  it('reads a group at depth 4, its ancestors included, in one statement per lookup', async () => {
    const store = open();
    await store.migrate();
    const { customer } = await seed(store);
    const deepest = await createChain(store, customer, 4);
    await store.findUserGroupByProvidedId(customer, deepest.providedId);
    const scratch = new Database(':memory:');
    const statementPrototype = Object.getPrototypeOf(scratch.prepare('SELECT 1')) as Database.Statement;
    scratch.close();
    const gets = vi.spyOn(statementPrototype, 'get');
    const alls = vi.spyOn(statementPrototype, 'all');
    try {
      const byId = await store.findUserGroupByProvidedId(customer, deepest.providedId);
      const byToken = await store.findUserGroupByTokenHash(customer, deepest.tokenHash);
      expect(gets.mock.calls.length + alls.mock.calls.length).toBe(2);
      expect(byId?.ancestors.map((ancestor) => ancestor.properties)).toEqual([
        { level: 3 },
        { level: 2 },
        { level: 1 },
      ]);
      expect(byToken).toEqual(byId);
    } finally {
      gets.mockRestore();
      alls.mockRestore();
    }
  });

  it('lets only one of two parent links racing through two instances on one file through when they would form a cycle', async () => {
    const first = open();
    await first.migrate();
    const { customer } = await seed(first);
    await raceForCycle([first, open()], customer, 25);
  });

  it('refuses at once an API token revoked or changed through another connection, though each caches live tokens', async () => {
    const server = open();
    await server.migrate();
    const { customer, workspace } = await seed(server);
    const cli = open();
    const input = newApiToken(customer);
    const record = await cli.insertApiToken(input, auditContext());
    expect(await server.findApiTokenByHash(input.tokenHash)).toEqual(record);
    expect(await server.findApiTokenByHash(input.tokenHash)).toEqual(record);
    await cli.recordApiTokenUse(record.id, T2);
    expect(await server.findApiTokenByHash(input.tokenHash)).toEqual({ ...record, lastUsedAt: T2 });
    await cli.revokeApiToken(workspace.id, record.id, auditContext());
    expect(await server.findApiTokenByHash(input.tokenHash)).toBeNull();
    // A raw write, as another program might make, is seen as well.
    const other = newApiToken(customer);
    const otherRecord = await server.insertApiToken(other, auditContext());
    expect(await server.findApiTokenByHash(other.tokenHash)).toEqual(otherRecord);
    openRaw().prepare('UPDATE api_tokens SET revoked_at = ? WHERE id = ?').run(T2, otherRecord.id);
    expect(await server.findApiTokenByHash(other.tokenHash)).toBeNull();
  });

  it('fails a write with unavailable and Retry-After while another connection holds the write lock', async () => {
    const store = open(50);
    await store.migrate();
    const { customer } = await seed(store);
    const blocker = openRaw();
    blocker.exec('BEGIN EXCLUSIVE');
    try {
      const attempt = store.insertUserGroupIfAbsent(newGroup(customer, 'blocked'), auditContext());
      await expectAppError(attempt, 'unavailable');
      const error = await attempt.catch((caught: unknown) => caught);
      expect((error as { retryAfterSeconds?: number }).retryAfterSeconds).toBeGreaterThan(0);
    } finally {
      blocker.exec('ROLLBACK');
    }
    const retried = await store.insertUserGroupIfAbsent(newGroup(customer, 'blocked'), auditContext());
    expect(retried.created).toBe(true);
  });

  it('keeps the event loop free while a write waits for a lock, and writes once the lock goes', async () => {
    const store = open(5000);
    await store.migrate();
    const { customer } = await seed(store);
    const blocker = openRaw();
    blocker.exec('BEGIN EXCLUSIVE');
    let settled = false;
    const waiting = store.insertUserGroupIfAbsent(newGroup(customer, 'queued'), auditContext()).finally(() => {
      settled = true;
    });
    // Reads and timers still run while the write is queued behind the lock.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await store.findWorkspaceById(customer.workspaceId)).not.toBeNull();
    expect(settled).toBe(false);
    blocker.exec('ROLLBACK');
    expect((await waiting).created).toBe(true);
  });

  it('removes mapping rows with their group, and keeps a mapped data source from being deleted', async () => {
    const store = open();
    await store.migrate();
    const fx = await seed(store);
    const mapping = [{ schemaId: fx.schemaA.id, dataSourceId: fx.customerA.id }];
    const { group } = await store.insertUserGroupIfAbsent(newGroup(fx.customer, 'g1', { mapping }), auditContext());
    const db = openRaw();
    db.pragma('foreign_keys = ON');
    const mappingRows = db.prepare('SELECT count(*) FROM user_group_mappings WHERE team_id = ?').pluck();
    expect(mappingRows.get(group.teamId)).toBe(1);
    expect(() => db.prepare('DELETE FROM data_sources WHERE id = ?').run(fx.customerA.id)).toThrow(/FOREIGN KEY/);
    await store.deleteUserGroup(fx.customer, group.teamId, group.version, auditContext());
    expect(mappingRows.get(group.teamId)).toBe(0);
  });

  it('writes 20 batches of 1000 new groups, each with its audit event', async () => {
    const store = open();
    await store.migrate();
    const { customer, schemaA, customerA } = await seed(store);
    const mapping = [{ schemaId: schemaA.id, dataSourceId: customerA.id }];
    for (let batch = 0; batch < 20; batch++) {
      const writes = Array.from({ length: 1000 }, (_, i) => ({
        kind: 'create' as const,
        group: newGroup(customer, `bulk-${batch}-${i}`, { properties: { batch, i }, mapping }),
        changes: { name: { before: null, after: `Group bulk-${batch}-${i}` } },
      }));
      await store.applyUserGroupWrites(customer, writes, auditContext(), { policy: 'per_batch' });
    }
    const db = openRaw();
    expect(db.prepare('SELECT count(*) FROM user_groups').pluck().get()).toBe(20_000);
    expect(db.prepare('SELECT count(*) FROM user_group_mappings').pluck().get()).toBe(20_000);
    expect(db.prepare("SELECT count(*) FROM audit_events WHERE action = 'user_group.created'").pluck().get()).toBe(
      20_000,
    );
    const [last] = await store.findUserGroupsByProvidedIds(customer, ['bulk-19-999']);
    expect(last).toMatchObject({ properties: { batch: 19, i: 999 }, mapping, version: 1 });
  });

  it('folds case in JavaScript wherever LIKE alone would miss a match', async () => {
    const store = open();
    await store.migrate();
    const { customer } = await seed(store);
    for (const [providedId, name] of [
      ['kilo', 'kilo'],
      ['kelvin', '\u212A'],
      ['other', 'other'],
    ]) {
      await store.insertUserGroupIfAbsent(newGroup(customer, providedId!, { name: name! }), auditContext());
    }
    const search = async (text: string) =>
      (await store.listUserGroups({ tenant: customer, search: text, limit: 10 })).map((group) => group.providedId);
    // KELVIN SIGN lowercases to an ASCII k: an ASCII name must not bypass folding for a non-ASCII search.
    expect(await search('\u212A')).toEqual(['kilo', 'kelvin']);
    expect(await search('K')).toEqual(['kilo', 'kelvin']);
  });

  it('answers ping, fails it with unavailable once closed, and closes twice without error', async () => {
    const store = open();
    await store.ping();
    await store.close();
    await store.close();
    await expectAppError(store.ping(), 'unavailable');
  });
});
