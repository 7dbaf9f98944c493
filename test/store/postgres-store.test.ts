import { randomBytes } from 'node:crypto';
import { connect, createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AppError, isAppError } from '../../src/domain/errors.js';
import { MIGRATIONS } from '../../src/store/postgres/migrations/index.js';
import { mapPostgresError } from '../../src/store/postgres/postgres-errors.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { INDEX_BUILD_LOCK_KEY, INDEX_BUILD_POLL_MS, migratePostgres } from '../../src/store/postgres/migrate.js';
import { openPostgresDatabase } from '../../src/store/postgres/postgres-database.js';
import type { PostgresStoreOptions } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/domain/store.port.js';
import { describeStoreContract } from './store.contract.js';
import { captureSchemaTemplate, schemaSnapshot } from '../support/postgres-schema-template.js';
import { POSTGRES_URL, schemaUrl, withPostgresClient } from '../support/test-database.js';
import { usageIncrement } from '../support/usage-increment.js';
import type { ClonedSchema, SchemaTemplate } from '../support/postgres-schema-template.js';
import { createChain, raceForCycle } from './contract/user-group-tree.contract.js';
import {
  auditContext,
  expectAppError,
  newApiToken,
  newGroup,
  randomHex,
  recordingTokenCheck,
  seed,
  T1,
  expectLegacyKeyMigrated,
} from './store-fixtures.js';
import type { Fixture } from './store-fixtures.js';

/*
 * Runs against a real PostgreSQL: UGS_TEST_POSTGRES_URL, or the local server CI starts. Each test
 * gets a fresh schema of its own (the store works in its connection's search_path), so tests never
 * see each other's rows. When PostgreSQL cannot be reached every test fails: nothing here skips.
 */

/** The database URL with its search_path (and optionally other parameters) set through the URL. */
function urlFor(schema: string, parameters: Record<string, string> = {}): string {
  const url = new URL(schemaUrl(schema));
  for (const [key, value] of Object.entries(parameters)) url.searchParams.set(key, value);
  return url.toString();
}

async function freshSchema(): Promise<{ schema: string; url: string; cleanup: () => Promise<void> }> {
  const schema = `t_${randomBytes(8).toString('hex')}`;
  await withPostgresClient((client) => client.query(`CREATE SCHEMA ${schema}`));
  return {
    schema,
    url: urlFor(schema),
    cleanup: () => withPostgresClient((client) => client.query(`DROP SCHEMA ${schema} CASCADE`)).then(() => undefined),
  };
}

/**
 * The contract's template on PostgreSQL: a schema migrated and seeded through openPostgresStore once
 * per file, copied per test (its DDL, rows and sequences' positions: see captureSchemaTemplate).
 */
let contractTemplate: { schema: string; captured?: Promise<SchemaTemplate> } | undefined;
describeStoreContract(
  'postgres',
  async () => {
    const { url, cleanup } = await freshSchema();
    return { store: openPostgresStore({ url }), cleanup };
  },
  {
    create: async () => {
      const { schema, url, cleanup } = await freshSchema();
      const template: { schema: string; captured?: Promise<SchemaTemplate> } = { schema };
      contractTemplate = template;
      const dropAll = async () => {
        await (await template.captured)?.close();
        await cleanup();
      };
      return { store: openPostgresStore({ url }), cleanup: dropAll };
    },
    copy: async () => {
      const template = contractTemplate!;
      template.captured ??= captureSchemaTemplate(template.schema, POSTGRES_URL);
      const copy = await (await template.captured).clone();
      return { store: openPostgresStore({ url: copy.url }), cleanup: copy.drop };
    },
  },
);

/** Elapsed milliseconds of `work`, which must reject with AppError `unavailable`. */
async function timeUnavailable(work: Promise<unknown>): Promise<number> {
  const started = Date.now();
  const error: unknown = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(isAppError(error) && error.code, `expected unavailable, got ${String(error)}`).toBe('unavailable');
  expect((error as AppError).retryAfterSeconds).toBeGreaterThan(0);
  return Date.now() - started;
}

/** A TCP server that accepts connections and never says a word: a database host gone silent. */
async function silentServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A relay to PostgreSQL that can stop passing bytes while keeping every connection open, as a
 * network that silently drops packets does, and start again.
 */
async function stallableRelay(
  target: URL,
): Promise<{ port: number; stall: (on: boolean) => void; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let stalled = false;
  const relay = (from: Socket, to: Socket) =>
    from.on('data', (chunk: Buffer) => {
      if (!stalled) to.write(chunk);
    });
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    stall: (on) => {
      stalled = on;
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('PostgreSQL store specifics', () => {
  let schema: string;
  let url: string;
  let cleanup: () => Promise<void>;
  const opened: Store[] = [];
  const teardown: (() => Promise<void>)[] = [];

  const open = (options: Partial<PostgresStoreOptions> = {}): Store => {
    const store = openPostgresStore({ url, ...options });
    opened.push(store);
    return store;
  };

  /** A session of its own on the test's schema, inside a transaction that has run `lock`; the returned function rolls it back. */
  const holdLock = async (lock: string, params: unknown[] = []): Promise<() => Promise<void>> => {
    const blocker = new pg.Client({ connectionString: urlFor(schema) });
    await blocker.connect();
    let ended = false;
    const end = async () => {
      if (!ended) await blocker.end();
      ended = true;
    };
    teardown.push(end);
    await blocker.query('BEGIN');
    await blocker.query(lock, params);
    return async () => {
      await blocker.query('ROLLBACK');
      await end();
    };
  };

  /**
   * What `work` answers when another session holds `table` for 900 ms, past the 300 ms statement
   * timeout these tests give the pool, and then lets it go.
   */
  const pastALock = async <R>(table: string, work: () => Promise<R>): Promise<R> => {
    const release = await holdLock(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    const answer = work();
    // Seen when awaited below; not an unhandled rejection while the lock is held.
    answer.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 900));
    await release();
    return answer;
  };

  /**
   * A schema migrated and seeded through the store once for this block; openSeeded copies it into
   * each test's schema instead of migrating and seeding that.
   */
  let seeded: Promise<{ template: SchemaTemplate; fx: Fixture; drop: () => Promise<void> }> | undefined;
  const seededTemplate = async () => {
    const made = await freshSchema();
    const store = openPostgresStore({ url: made.url });
    try {
      await store.migrate();
      const fx = await seed(store);
      const template = await captureSchemaTemplate(made.schema, POSTGRES_URL);
      const drop = async () => {
        await template.close();
        await made.cleanup();
      };
      return { template, fx, drop };
    } finally {
      await store.close();
    }
  };

  afterAll(async () => {
    const made = seeded;
    seeded = undefined;
    if (made) await (await made).drop();
  });

  /** `count` stores on the test's schema, filled with a migrated, seeded one and migrated through the first. */
  const openSeeded = async (count: number, options: Partial<PostgresStoreOptions> = {}) => {
    const { template, fx } = await (seeded ??= seededTemplate());
    await template.fill(schema);
    const stores = Array.from({ length: count }, () => open(options));
    // Migrating the migrated copy changes nothing; the stores are still ones that migrate() ran on.
    await stores[0]!.migrate();
    // A copy per test: a test may change the objects it was handed.
    return { stores, fx: structuredClone(fx) };
  };

  const inSchema = <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) =>
    withPostgresClient(async (client) => {
      await client.query(`SET search_path = ${schema}`);
      return (await client.query<R>(text, values)).rows;
    });

  /** The database under the store, for running migrations as a given release would. */
  const openDatabase = () => {
    const db = openPostgresDatabase({ url, poolSize: 2 });
    teardown.push(() => db.close());
    return db;
  };

  const stepsOf = (kind: 'expand' | 'contract') => MIGRATIONS.filter((migration) => migration.kind === kind);

  /** Whether the named index is valid, and its access method. */
  const indexState = (name: string) =>
    inSchema<{ valid: boolean; method: string }>(
      `SELECT i.indisvalid AS valid, a.amname AS method FROM pg_index i
       JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
       WHERE i.indexrelid = to_regclass($1)`,
      [name],
    );

  beforeEach(async () => {
    ({ schema, url, cleanup } = await freshSchema());
  });

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    for (const step of teardown.splice(0)) await step();
    await cleanup();
  });

  it('migrates into the schema its URL names, once', async () => {
    const store = open();
    await store.migrate();
    await store.migrate();
    await open().migrate();
    const tables = await withPostgresClient(async (client) =>
      (
        await client.query<{ table_name: string }>(
          'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
          [schema],
        )
      ).rows.map((row) => row.table_name),
    );
    expect(tables).toEqual([
      'api_tokens',
      'audit_events',
      'console_sessions',
      'consumed_embed_tokens',
      'data_sources',
      'embed_revocation_keys',
      'embed_token_revocations',
      'group_usage',
      'idempotency_keys',
      'oidc_flows',
      'person_sessions',
      'schema_expansions',
      'schema_migrations',
      'schemas',
      'signing_keys',
      'team_id_gaps',
      'user_group_mappings',
      'user_groups',
      'webhook_deliveries',
      'webhook_endpoints',
      'webhook_events',
      'workspaces',
    ]);
    expect(await inSchema('SELECT version, name FROM schema_migrations ORDER BY version')).toEqual(
      stepsOf('contract').map(({ version, name }) => ({ version, name })),
    );
    expect(await inSchema('SELECT version, name FROM schema_expansions ORDER BY version')).toEqual(
      stepsOf('expand').map(({ version, name }) => ({ version, name })),
    );
  });

  it("serves the audit trail's person filter through an index, and wants exactly one owner per idempotency key", async () => {
    await open().migrate();
    expect(
      await inSchema(
        "SELECT indexdef FROM pg_indexes WHERE indexname = 'audit_events_person' AND schemaname = current_schema()",
      ),
    ).toEqual([
      {
        indexdef: expect.stringMatching(
          /ON \S*audit_events USING btree \(workspace_id, actor_subject, id\) WHERE \(actor_subject IS NOT NULL\)$/,
        ),
      },
    ]);
    const [workspace] = await inSchema<{ id: string }>(
      "INSERT INTO workspaces (name, created_at) VALUES ('owners', now()) RETURNING id",
    );
    const [token] = await inSchema<{ id: string }>(
      "INSERT INTO api_tokens (workspace_id, environment, name, token_hash, scope, created_at) VALUES ($1, 'Customer', 'owner', 'owner-hash', 'write', now()) RETURNING id",
      [workspace!.id],
    );
    const insert = (apiTokenId: string | null, personKey: string | null) =>
      inSchema(
        "INSERT INTO idempotency_keys (api_token_id, person_key, key_hash, fingerprint, created_at) VALUES ($1, $2, 'k', 'f', now())",
        [apiTokenId, personKey],
      );
    await expect(insert(null, null)).rejects.toThrow(/idempotency_keys_one_owner/);
    await expect(insert(token!.id, '[1,"i","s"]')).rejects.toThrow(/idempotency_keys_one_owner/);
    await insert(null, '[1,"i","s"]');
    await insert(token!.id, null);
  });

  it('copies a schema whole: a copy of a freshly migrated one, and of one migrated and seeded, is the same as it', async () => {
    const store = open();
    await store.migrate();
    const migrated = await schemaSnapshot(schema, POSTGRES_URL);
    expect((migrated.rows as Record<string, unknown[]>).schema_migrations).toHaveLength(stepsOf('contract').length);
    expect((migrated.indexes as unknown[]).length).toBeGreaterThan(20);
    const templates: SchemaTemplate[] = [];
    const copies: ClonedSchema[] = [];
    teardown.push(async () => {
      // A template's close waits for the copies being dropped.
      for (const copy of copies) await copy.drop();
      for (const template of templates) await template.close();
    });
    const copyOf = async () => {
      const template = await captureSchemaTemplate(schema, POSTGRES_URL);
      templates.push(template);
      const copy = await template.clone();
      copies.push(copy);
      return copy;
    };
    const ofMigrated = await copyOf();
    expect(await schemaSnapshot(ofMigrated.schema, POSTGRES_URL)).toEqual(migrated);

    await seed(store);
    const seededState = await schemaSnapshot(schema, POSTGRES_URL);
    expect(seededState.sequences).not.toEqual(migrated.sequences);
    const ofSeeded = await copyOf();
    expect(await schemaSnapshot(ofSeeded.schema, POSTGRES_URL)).toEqual(seededState);
    // The copy carries on from where the template's sequences stood.
    const next = open({ url: ofSeeded.url });
    await next.migrate();
    // Its migration records are stamped when it was made, as a schema migrated then would be.
    expect(Date.parse(await next.lowSignaturesSince())).toBeGreaterThan(Date.parse(await store.lowSignaturesSince()));
    const inCopy = await next.createWorkspace('after-copy', auditContext());
    expect(inCopy.id).toBe((await open().createWorkspace('after-copy', auditContext())).id);
  });

  it("makes the signing keys of a database from before migration 9 Customer's", async () => {
    const workspaceId = await withPostgresClient(async (client) => {
      await client.query(`SET search_path = ${schema}`);
      await client.query(
        'CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)',
      );
      for (const migration of MIGRATIONS.filter(({ version }) => version < 9)) {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations VALUES ($1, $2, now())', [migration.version, migration.name]);
      }
      const [workspace] = (
        await client.query<{ id: string }>(
          "INSERT INTO workspaces (name, created_at) VALUES ('legacy', now()) RETURNING id",
        )
      ).rows;
      await client.query(
        "INSERT INTO signing_keys (workspace_id, kid, public_jwk, private_key_ciphertext, created_at) VALUES ($1, 'legacy-kid', '{}', 'v1.x', now())",
        [workspace!.id],
      );
      return Number(workspace!.id);
    });
    await expectLegacyKeyMigrated(open(), workspaceId);
  });

  it('refuses a database newer than the code', async () => {
    await open().migrate();
    await inSchema("INSERT INTO schema_migrations VALUES (999, 'future', now())");
    await expect(open().migrate()).rejects.toThrow(/newer than this program/);
  });

  it('lets the previous release start on a database a newer one expanded', async () => {
    await open().migrate();
    const previous = MIGRATIONS.filter(({ kind }) => kind === 'contract');
    expect(previous.length).toBeLessThan(MIGRATIONS.length);
    // As the previous release reads it: the highest contract step is one it knows.
    const [level] = await inSchema<{ version: number }>('SELECT max(version) AS version FROM schema_migrations');
    expect(level?.version).toBe(previous.at(-1)!.version);
    await expect(migratePostgres(openDatabase(), previous)).resolves.toBe(0);
  });

  /** The test's schema migrated up to the first step that builds an index concurrently, and that index's name. */
  const migratedUpToFirstIndexBuild = async () => {
    const build = MIGRATIONS.find((migration) => migration.concurrentIndexes !== undefined)!;
    await migratePostgres(
      openDatabase(),
      MIGRATIONS.filter(({ version }) => version < build.version),
    );
    return { build, index: build.concurrentIndexes![0]!.name };
  };

  it('builds an index concurrently, replacing an invalid one an interrupted build left', async () => {
    const { build, index } = await migratedUpToFirstIndexBuild();
    await inSchema("INSERT INTO workspaces (name, created_at) VALUES ('a', now()), ('b', now())");
    await inSchema(
      `INSERT INTO user_groups (workspace_id, environment, provided_id, name, token_hash, token_ciphertext, tags, created_at, updated_at)
       SELECT w.id, 'Customer', 'g' || n || '-' || w.id, 'G', 'h' || n || '-' || w.id, 'c', ARRAY['x'], now(), now()
       FROM workspaces w, generate_series(1, 3) n`,
    );
    // A unique build over duplicate values fails and leaves its index behind, invalid.
    await expect(inSchema(`CREATE UNIQUE INDEX CONCURRENTLY ${index} ON user_groups (environment)`)).rejects.toThrow();
    expect(await indexState(index)).toEqual([{ valid: false, method: 'btree' }]);
    await expect(migratePostgres(openDatabase(), MIGRATIONS)).resolves.toBe(MIGRATIONS.length - build.version + 1);
    expect(await indexState(index)).toEqual([{ valid: true, method: 'gin' }]);
    expect(await inSchema('SELECT version FROM schema_expansions ORDER BY version')).toEqual(
      stepsOf('expand')
        .filter(({ version }) => version >= build.version)
        .map(({ version }) => ({ version })),
    );
  });

  it('waits while another process builds an index (its build lock held), then builds its own', async () => {
    const { build, index } = await migratedUpToFirstIndexBuild();
    // The lock is the database's, not the schema's: another release's builder anywhere holds it.
    const otherBuilder = new pg.Client({ connectionString: POSTGRES_URL });
    await otherBuilder.connect();
    teardown.push(() => otherBuilder.end());
    await otherBuilder.query(`SELECT pg_advisory_lock(${INDEX_BUILD_LOCK_KEY})`);
    let migrated = false;
    const migrating = migratePostgres(openDatabase(), MIGRATIONS).finally(() => (migrated = true));
    // Long enough for several of its tries: it neither builds nor gives up while the lock is held.
    await new Promise((resolve) => setTimeout(resolve, 4 * INDEX_BUILD_POLL_MS));
    expect(migrated).toBe(false);
    expect(await indexState(index)).toEqual([]);
    await otherBuilder.query(`SELECT pg_advisory_unlock(${INDEX_BUILD_LOCK_KEY})`);
    await expect(migrating).resolves.toBe(MIGRATIONS.length - build.version + 1);
    expect(await indexState(index)).toEqual([{ valid: true, method: 'gin' }]);
  });

  it('migrates safely from several store instances at once', async () => {
    const stores = Array.from({ length: 6 }, () => open({ poolSize: 2 }));
    const created = await Promise.all(
      stores.map(async (store) => {
        await store.migrate();
        return (await store.ensureWorkspace('default', auditContext())).created;
      }),
    );
    expect(created.filter(Boolean)).toHaveLength(1);
    expect(await inSchema('SELECT version FROM schema_migrations ORDER BY version')).toEqual(
      stepsOf('contract').map(({ version }) => ({ version })),
    );
    expect(await inSchema('SELECT version FROM schema_expansions ORDER BY version')).toEqual(
      stepsOf('expand').map(({ version }) => ({ version })),
    );
    const [events] = await inSchema<{ count: string }>(
      "SELECT count(*) FROM audit_events WHERE action = 'workspace.created'",
    );
    expect(events?.count).toBe('1');
  });

  it('shows one instance the writes of another at once', async () => {
    const {
      stores: [writer, reader],
      fx: { customer },
    } = await openSeeded(2);
    const { group } = await writer!.insertUserGroupIfAbsent(newGroup(customer, 'shared'), auditContext());
    expect(await reader!.findUserGroupByTokenHash(customer, group.tokenHash)).toEqual(group);
    expect(await reader!.deleteUserGroup(customer, group.teamId, group.version, auditContext())).toEqual({
      status: 'deleted',
    });
    expect(await writer!.findUserGroupByProvidedId(customer, 'shared')).toBeNull();
    expect(await writer!.findUserGroupByTokenHash(customer, group.tokenHash)).toBeNull();
  });

  it('reads a group at depth 4, its ancestors included, in one statement per lookup', async () => {
    const { stores, fx } = await openSeeded(1);
    const store = stores[0]!;
    const deepest = await createChain(store, fx.customer, 4);
    await store.findUserGroupByProvidedId(fx.customer, deepest.providedId);
    const statements = vi.spyOn(pg.Client.prototype, 'query');
    try {
      const byId = await store.findUserGroupByProvidedId(fx.customer, deepest.providedId);
      const byToken = await store.findUserGroupByTokenHash(fx.customer, deepest.tokenHash);
      expect(statements).toHaveBeenCalledTimes(2);
      expect(byId?.ancestors.map((ancestor) => ancestor.properties)).toEqual([
        { level: 3 },
        { level: 2 },
        { level: 1 },
      ]);
      expect(byToken).toEqual(byId);
    } finally {
      statements.mockRestore();
    }
  });

  it("confirms a caller's remembered API token in the group lookup itself: one statement, live or not, group or not", async () => {
    const { stores, fx } = await openSeeded(1);
    const store = stores[0]!;
    const group = await store.insertUserGroupIfAbsent(newGroup(fx.customer, 'checked'), auditContext());
    const input = newApiToken(fx.customer, { rateLimit: { perSecond: 5, burst: 7 } });
    const token = { ...(await store.insertApiToken(input, auditContext())), tokenHash: input.tokenHash };
    const checkOf = () => recordingTokenCheck(token);
    const statements = vi.spyOn(pg.Client.prototype, 'query');
    try {
      const live = checkOf();
      expect(await store.findUserGroupByProvidedId(fx.customer, 'checked', live.check)).toEqual(group.group);
      expect(await store.findUserGroupByTokenHash(fx.customer, randomHex(), live.check)).toBeNull();
      const missing = checkOf();
      expect(await store.findUserGroupByTokenHash(fx.customer, randomHex(), missing.check)).toBeNull();
      // One statement a lookup; a check once settled is not read again.
      expect(statements).toHaveBeenCalledTimes(3);
      expect(live.settled).toEqual([{ live: true, rateLimit: { perSecond: 5, burst: 7 } }]);
      expect(missing.settled).toEqual([{ live: true, rateLimit: { perSecond: 5, burst: 7 } }]);
    } finally {
      statements.mockRestore();
    }
    await store.revokeApiToken(fx.customer.workspaceId, token.id, auditContext());
    const revoked = checkOf();
    await expectAppError(store.findUserGroupByProvidedId(fx.customer, 'checked', revoked.check), 'invalid_api_token');
    expect(revoked.settled).toEqual([{ live: false, rateLimit: { perSecond: 5, burst: 7 } }]);
    const unknown = checkOf();
    await expectAppError(
      store.findUserGroupByTokenHash(fx.customer, group.group.tokenHash, {
        ...unknown.check,
        apiTokenId: token.id + 1000,
      }),
      'invalid_api_token',
    );
  });

  it('answers the hot reads asked for in one turn with one statement per kind of lookup', async () => {
    const { stores, fx } = await openSeeded(1);
    const store = stores[0]!;
    const groups = await Promise.all(
      ['a', 'b', 'c'].map(
        async (id) => (await store.insertUserGroupIfAbsent(newGroup(fx.customer, id), auditContext())).group,
      ),
    );
    const statements = vi.spyOn(pg.Client.prototype, 'query');
    try {
      const found = await Promise.all([
        ...groups.map((group) => store.findUserGroupByProvidedId(fx.customer, group.providedId)),
        ...groups.map((group) => store.findUserGroupByTokenHash(fx.customer, group.tokenHash)),
      ]);
      expect(found).toEqual([...groups, ...groups]);
      expect(statements).toHaveBeenCalledTimes(2);
    } finally {
      statements.mockRestore();
    }
  });

  it('lets only one of two parent links racing through two instances through when they would form a cycle', async () => {
    const { stores, fx } = await openSeeded(2);
    await raceForCycle([stores[0]!, stores[1]!], fx.customer, 25);
  });

  it('creates exactly one group from 96 concurrent get-or-create calls spread over four instances', async () => {
    const { stores, fx } = await openSeeded(4, { poolSize: 5 });
    const mapping = [{ schemaId: fx.schemaA.id, dataSourceId: fx.customerA.id }];
    const results = await Promise.all(
      Array.from({ length: 96 }, (_, i) =>
        stores[i % stores.length]!.insertUserGroupIfAbsent(newGroup(fx.customer, 'race', { mapping }), auditContext()),
      ),
    );
    expect(results.filter((result) => result.created)).toHaveLength(1);
    const first = results[0]!.group;
    for (const { group } of results) expect(group).toEqual(first);
    expect(first.mapping).toEqual(mapping);
    expect(await inSchema("SELECT count(*)::int AS n FROM user_groups WHERE provided_id = 'race'")).toEqual([{ n: 1 }]);
    expect(await inSchema("SELECT count(*)::int AS n FROM audit_events WHERE action = 'user_group.created'")).toEqual([
      { n: 1 },
    ]);
  });

  it('lets exactly one of concurrent rotations with the same token win, across instances', async () => {
    const { stores, fx } = await openSeeded(3);
    const { group } = await stores[0]!.insertUserGroupIfAbsent(newGroup(fx.customer, 'g1'), auditContext());
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => {
        const newTokenHash = randomHex();
        return stores[i % stores.length]!.rotateUserGroupToken(
          {
            tenant: fx.customer,
            currentTokenHash: group.tokenHash,
            newTokenHash,
            newTokenCiphertext: `c-${newTokenHash}`,
            updatedAt: T1,
          },
          auditContext(),
        );
      }),
    );
    const winners = results.filter((result) => result !== null);
    expect(winners).toHaveLength(1);
    expect(await stores[1]!.findUserGroupByTokenHash(fx.customer, group.tokenHash)).toBeNull();
    expect(await stores[2]!.findUserGroupByTokenHash(fx.customer, winners[0]!.tokenHash)).toEqual(winners[0]);
  });

  it('lets one of concurrent updates of the same version win, and one of two renames onto one id', async () => {
    const { stores, fx } = await openSeeded(2);
    const [a, b] = await Promise.all(
      ['a', 'b'].map(
        async (id) => (await stores[0]!.insertUserGroupIfAbsent(newGroup(fx.customer, id), auditContext())).group,
      ),
    );
    const updates = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        stores[i % 2]!.updateUserGroup(
          {
            tenant: fx.customer,
            teamId: a!.teamId,
            expectedVersion: a!.version,
            patch: { name: `n${i}` },
            updatedAt: T1,
          },
          auditContext(),
        ),
      ),
    );
    expect(updates.filter((result) => result !== null)).toHaveLength(1);

    const renames = await Promise.allSettled(
      [b!, (await stores[0]!.findUserGroupByTeamId(fx.customer, a!.teamId))!].map((group, i) =>
        stores[i]!.updateUserGroup(
          {
            tenant: fx.customer,
            teamId: group.teamId,
            expectedVersion: group.version,
            patch: { providedId: 'same' },
            updatedAt: T1,
          },
          auditContext(),
        ),
      ),
    );
    expect(renames.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const refused = renames.find((outcome) => outcome.status === 'rejected');
    expect(refused?.status === 'rejected' && (refused.reason as AppError).code).toBe('user_group_id_taken');
  });

  it('settles crossing batches (a deadlock when they interleave) with one applied and one concurrent_change', async () => {
    const { stores, fx } = await openSeeded(2);
    const [a, b] = await Promise.all(
      ['a', 'b'].map(
        async (id) => (await stores[0]!.insertUserGroupIfAbsent(newGroup(fx.customer, id), auditContext())).group,
      ),
    );
    const updateOf = (group: typeof a, name: string) => ({
      kind: 'update' as const,
      update: {
        tenant: fx.customer,
        teamId: group!.teamId,
        expectedVersion: group!.version,
        patch: { name },
        updatedAt: T1,
      },
      changes: {},
    });
    // Both instances hold an open connection, so the two transactions start together and interleave.
    await stores[1]!.ping();
    const outcomes = await Promise.allSettled([
      stores[0]!.applyUserGroupWrites(fx.customer, [updateOf(a, 'first'), updateOf(b, 'first')], auditContext(), {
        policy: 'per_batch',
      }),
      stores[1]!.applyUserGroupWrites(fx.customer, [updateOf(b, 'second'), updateOf(a, 'second')], auditContext(), {
        policy: 'per_batch',
      }),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((outcome) => outcome.status === 'rejected');
    expect(refused?.status === 'rejected' && (refused.reason as AppError).code).toBe('concurrent_change');
    const names = (await stores[0]!.findUserGroupsByProvidedIds(fx.customer, ['a', 'b'])).map((group) => group.name);
    expect(new Set(names).size).toBe(1);
  });

  it('inserts the first-start API tokens once when instances start together', async () => {
    const { stores, fx } = await openSeeded(3);
    const attempts = await Promise.all(
      Array.from({ length: 9 }, (_, i) =>
        stores[i % 3]!.insertApiTokensIfWorkspaceHasNone(
          fx.workspace.id,
          [newApiToken(fx.customer, { scope: 'admin' }), newApiToken(fx.testing, { scope: 'admin' })],
          auditContext(),
        ),
      ),
    );
    expect(attempts.filter((result) => result !== null)).toHaveLength(1);
    expect(await stores[1]!.listApiTokens(fx.workspace.id)).toHaveLength(2);
  });

  it('refuses to delete a data source that a group maps to concurrently, or deletes it before the group maps it', async () => {
    const { stores, fx } = await openSeeded(2);
    const mapping = [{ schemaId: fx.customerA.schemaId, dataSourceId: fx.customerA.id }];
    const [created, deleted] = await Promise.allSettled([
      stores[0]!.insertUserGroupIfAbsent(newGroup(fx.customer, 'mapped', { mapping }), auditContext()),
      stores[1]!.deleteDataSource(fx.workspace.id, fx.customerA.id, auditContext()),
    ]);
    const group = await stores[0]!.findUserGroupByProvidedId(fx.customer, 'mapped');
    const dataSource = await stores[0]!.findDataSourceById(fx.workspace.id, fx.customerA.id);
    // Either order is fine; a group mapping to a data source that is gone never is.
    if (group) {
      expect(dataSource).not.toBeNull();
      expect(deleted).toEqual({ status: 'fulfilled', value: { status: 'in_use', usedBy: 1 } });
    } else {
      expect(dataSource).toBeNull();
      expect(created.status).toBe('rejected');
    }
  });

  it('keeps to its pool size under more concurrent calls than connections', async () => {
    const applicationName = `ugs-test-${randomBytes(6).toString('hex')}`;
    const store = open({ poolSize: 2, url: urlFor(schema, { application_name: applicationName }) });
    await store.migrate();
    const { customer } = await seed(store);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0
          ? store.insertUserGroupIfAbsent(newGroup(customer, `g${i}`), auditContext()).then((result) => result.created)
          : store.findUserGroupByProvidedId(customer, `g${i - 1}`).then(() => true),
      ),
    );
    expect(results.every(Boolean)).toBe(true);
    const [connections] = await withPostgresClient(
      async (client) =>
        (
          await client.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
            [applicationName],
          )
        ).rows,
    );
    expect(connections?.n).toBeGreaterThan(0);
    expect(connections?.n).toBeLessThanOrEqual(2);
  });

  it('round-trips properties as the exact JSON text, key order and \\u0000 included', async () => {
    const {
      stores: [store],
      fx,
    } = await openSeeded(1);
    const properties = {
      zebra: 1,
      apple: 'nul \u0000 inside',
      nested: { y: [1, { b: 2, a: 1 }], x: null },
      '': 'empty',
    };
    const { group } = await store!.insertUserGroupIfAbsent(
      newGroup(fx.customer, 'json', { properties }),
      auditContext(),
    );
    const found = await store!.findUserGroupByProvidedId(fx.customer, 'json');
    for (const record of [group, found]) {
      expect(JSON.stringify(record?.properties)).toBe(JSON.stringify(properties));
    }
    expect(await inSchema("SELECT properties::text AS text FROM user_groups WHERE provided_id = 'json'")).toEqual([
      { text: JSON.stringify(properties) },
    ]);
  });

  it('stores timestamps as timestamptz and returns them exactly, to the millisecond', async () => {
    const {
      stores: [store],
      fx,
    } = await openSeeded(1);
    const createdAt = '2026-11-22T10:00:00.123Z';
    const { group } = await store!.insertUserGroupIfAbsent(
      newGroup(fx.customer, 'ts', { createdAt }),
      auditContext({ at: createdAt }),
    );
    expect(group).toMatchObject({ createdAt, updatedAt: createdAt });
    const [event] = await store!.listAuditEvents({ workspaceId: fx.workspace.id, limit: 1 });
    expect(event?.at).toBe(createdAt);
    expect(
      await inSchema("SELECT pg_typeof(created_at)::text AS type FROM user_groups WHERE provided_id = 'ts'"),
    ).toEqual([{ type: 'timestamp with time zone' }]);
  });

  it('folds case beyond ASCII in name search, where the database locale is UTF-8', async () => {
    const {
      stores: [store],
      fx,
    } = await openSeeded(1);
    for (const [providedId, name] of [
      ['kilo', 'kilo'],
      ['kelvin', '\u212A'],
      ['other', 'other'],
    ] as const) {
      await store!.insertUserGroupIfAbsent(newGroup(fx.customer, providedId, { name }), auditContext());
    }
    const search = async (text: string) =>
      (await store!.listUserGroups({ tenant: fx.customer, search: text, limit: 10 })).map((group) => group.providedId);
    // KELVIN SIGN lowercases to an ASCII k.
    expect(await search('\u212A')).toEqual(['kilo', 'kelvin']);
    expect(await search('K')).toEqual(['kilo', 'kelvin']);
  });

  it('writes 10 batches of 1000 new groups, each with its audit event', async () => {
    const {
      stores: [store],
      fx,
    } = await openSeeded(1);
    const mapping = [{ schemaId: fx.schemaA.id, dataSourceId: fx.customerA.id }];
    for (let batch = 0; batch < 10; batch++) {
      const writes = Array.from({ length: 1000 }, (_, i) => ({
        kind: 'create' as const,
        group: newGroup(fx.customer, `bulk-${batch}-${i}`, { properties: { batch, i }, mapping }),
        changes: { name: { before: null, after: `Group bulk-${batch}-${i}` } },
      }));
      await store!.applyUserGroupWrites(fx.customer, writes, auditContext(), { policy: 'per_batch' });
    }
    expect(
      await inSchema(`SELECT (SELECT count(*)::int FROM user_groups) AS groups, (SELECT count(*)::int FROM user_group_mappings) AS mappings,
        (SELECT count(*)::int FROM audit_events WHERE action = 'user_group.created') AS events`),
    ).toEqual([{ groups: 10_000, mappings: 10_000, events: 10_000 }]);
    const [last] = await store!.findUserGroupsByProvidedIds(fx.customer, ['bulk-9-999']);
    expect(last).toMatchObject({ properties: { batch: 9, i: 999 }, mapping, version: 1 });
  });

  it('answers ping, fails it with unavailable once closed, and closes twice without error', async () => {
    const store = open();
    await store.ping();
    await Promise.all([store.close(), store.close()]);
    await store.close();
    await expectAppError(store.ping(), 'unavailable');
    await expectAppError(store.findWorkspaceByName('acme'), 'unavailable');
  });

  it('fails every kind of call with unavailable at once when nothing listens on the port', async () => {
    const store = open({ url: 'postgres://postgres@127.0.0.1:1/test', connectionTimeoutMs: 1000 });
    const elapsed = [
      await timeUnavailable(store.ping()),
      await timeUnavailable(store.migrate()),
      await timeUnavailable(store.findWorkspaceByName('default')),
      await timeUnavailable(store.ensureWorkspace('default', auditContext())),
    ];
    for (const ms of elapsed) expect(ms).toBeLessThan(1000);
  });

  it('gives up within the connection timeout on a host that accepts connections but never answers', async () => {
    const server = await silentServer();
    teardown.push(server.close);
    const store = open({ url: `postgres://postgres@127.0.0.1:${server.port}/test`, connectionTimeoutMs: 300 });
    for (const call of [
      () => store.ping(),
      () => store.findWorkspaceByName('default'),
      () => store.createWorkspace('x', auditContext()),
    ]) {
      const ms = await timeUnavailable(call());
      expect(ms).toBeGreaterThanOrEqual(250);
      expect(ms).toBeLessThan(1500);
    }
  });

  it('cancels a statement stuck on a lock at statement_timeout with unavailable, and keeps working', async () => {
    const {
      stores: [store],
      fx,
    } = await openSeeded(1, { statementTimeoutMs: 300 });
    const { group } = await store!.insertUserGroupIfAbsent(newGroup(fx.customer, 'locked'), auditContext());
    const release = await holdLock('SELECT 1 FROM user_groups WHERE team_id = $1 FOR UPDATE', [group.teamId]);
    const update = {
      tenant: fx.customer,
      teamId: group.teamId,
      expectedVersion: group.version,
      patch: { name: 'x' },
      updatedAt: T1,
    };
    const ms = await timeUnavailable(store!.updateUserGroup(update, auditContext()));
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(1500);
    await release();
    expect(await store!.updateUserGroup(update, auditContext())).toMatchObject({ name: 'x', version: 2 });
  });

  it("lets the key census and re-encryption's search outlast the pool's statement_timeout, as their walks grow with the data", async () => {
    const {
      stores: [store],
      fx,
    } = await openSeeded(1, { statementTimeoutMs: 300 });
    await store!.insertUserGroupIfAbsent(newGroup(fx.customer, 'census'), auditContext());
    const census = await store!.countCiphertextsByKey();
    expect(census.some((count) => count.kind === 'user_group_token' && count.count === 1)).toBe(true);
    // A walk kept waiting past the pool's 300 ms (here by a lock; at scale by the rows it reads) still answers.
    const [counted, listed] = await pastALock('user_groups', () =>
      Promise.all([
        store!.countCiphertextsByKey(),
        store!.listCiphertextsNotUnderKey('user_group_token', 'none-such', 0, 10),
      ]),
    );
    expect(counted).toEqual(census);
    expect(listed).toHaveLength(1);
    // The pool's own statements keep the pool's limit.
    const release = await holdLock('LOCK TABLE user_groups IN ACCESS EXCLUSIVE MODE');
    await timeUnavailable(store!.findUserGroupByProvidedId(fx.customer, 'census'));
    await release();
  });

  it("lets the usage top outlast the pool's statement_timeout (it ranks every usage row in range), and nothing else", async () => {
    const {
      stores: [store],
      fx,
    } = await openSeeded(1, { statementTimeoutMs: 300 });
    const { group } = await store!.insertUserGroupIfAbsent(newGroup(fx.customer, 'counted'), auditContext());
    await store!.addUsage([usageIncrement(fx.customer, group.teamId, '2026-11-21', { reads: 3 })]);
    const query = { since: '2026-11-01', until: '2026-11-30', metric: 'reads', limit: 10 } as const;
    const top = await store!.listTopUsage(fx.customer, query);
    expect(top.map((row) => [row.providedId, row.reads])).toEqual([['counted', 3]]);
    // Kept waiting past the pool's 300 ms (here by a lock; at scale by the rows it ranks), it still answers.
    expect(await pastALock('group_usage', () => store!.listTopUsage(fx.customer, query))).toEqual(top);
    // A day's usage, read by the pool's own statements, keeps the pool's limit.
    const release = await holdLock('LOCK TABLE group_usage IN ACCESS EXCLUSIVE MODE');
    await timeUnavailable(store!.listUsageDays(fx.customer, group.teamId, query));
    await release();
  });

  it('gives up on a query the network stopped answering, and recovers by itself once it answers again', async () => {
    const relay = await stallableRelay(new URL(POSTGRES_URL));
    teardown.push(relay.close);
    const through = new URL(urlFor(schema));
    through.hostname = '127.0.0.1';
    through.port = String(relay.port);
    const {
      stores: [store],
    } = await openSeeded(1, { url: through.toString(), statementTimeoutMs: 300, connectionTimeoutMs: 500 });
    expect(await store!.findWorkspaceByName('acme')).not.toBeNull();

    relay.stall(true);
    // statement_timeout cannot help when the server's answers are lost: the client-side limit must.
    for (const call of [
      () => store!.findWorkspaceByName('acme'),
      () => store!.createWorkspace('during', auditContext()),
      () => store!.ping(),
    ]) {
      expect(await timeUnavailable(call())).toBeLessThan(2500);
    }

    relay.stall(false);
    expect(await store!.findWorkspaceByName('acme')).not.toBeNull();
    await store!.createWorkspace('after', auditContext());
    expect((await store!.listWorkspaces()).map((workspace) => workspace.name)).toEqual(['acme', 'globex', 'after']);
  });

  it('survives the server ending an idle connection, and opens a fresh one for the next call', async () => {
    const applicationName = `ugs-test-${randomBytes(6).toString('hex')}`;
    const store = open({ url: urlFor(schema, { application_name: applicationName }) });
    await store.migrate();
    await store.ping();
    const terminated = await withPostgresClient(
      async (client) =>
        (
          await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
            applicationName,
          ])
        ).rowCount,
    );
    expect(terminated).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await store.ping();
    expect(await store.findWorkspaceByName('nope')).toBeNull();
  });
});

describe('PostgreSQL error mapping', () => {
  const withCode = (code: string, extra: Record<string, unknown> = {}) =>
    Object.assign(new Error(`error ${code}`), { code, ...extra });

  const mapped = (error: unknown): unknown => {
    try {
      return mapPostgresError(error);
    } catch (caught) {
      return caught;
    }
  };

  it('turns each unique violation into its *_taken error, naming the field', () => {
    const cases = [
      ['user_groups_provided_id_key', 'user_group_id_taken', 'new_user_group_id'],
      ['data_sources_provided_id_key', 'data_source_id_taken', 'provided_id'],
      ['schemas_name_key', 'schema_name_taken', 'name'],
      ['workspaces_name_key', 'workspace_name_taken', 'name'],
      ['user_groups_token_hash_key', 'user_group_token_taken', 'token'],
    ] as const;
    for (const [constraint, code, field] of cases) {
      expect(mapped(withCode('23505', { constraint }))).toMatchObject({ code, field });
    }
    const other = withCode('23505', { constraint: 'api_tokens_token_hash_key' });
    expect(mapped(other)).toBe(other);
  });

  it('reports a mapping whose data source vanished mid-write as unknown_data_source', () => {
    expect(mapped(withCode('23503'))).toMatchObject({ code: 'unknown_data_source', field: 'mapping' });
  });

  it('turns connection failures, timeouts and server shutdowns into unavailable, and passes anything else through', () => {
    const unavailableCases: unknown[] = [
      withCode('ECONNREFUSED'),
      withCode('ECONNRESET'),
      withCode('ETIMEDOUT'),
      withCode('EPIPE'),
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Query read timeout'),
      withCode('08006'),
      withCode('57P01'),
      withCode('57P02'),
      withCode('57P03'),
      withCode('53300'),
      withCode('57014'),
      withCode('40P01'),
    ];
    for (const error of unavailableCases) expect(mapped(error)).toMatchObject({ code: 'unavailable', cause: error });
    for (const error of [new Error('boom'), withCode('42P01'), new AppError('concurrent_change', 'x')]) {
      expect(mapped(error)).toBe(error);
    }
  });
});
