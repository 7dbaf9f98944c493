import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/http/app.js';
import type { Clock } from '../../src/domain/clock.js';
import type { RateLimitOption } from '../../src/rate-limit/rate-limit-setting.js';
import type { Environment, Scope } from '../../src/domain/tenancy.js';
import { ENVIRONMENTS, SCOPES } from '../../src/domain/tenancy.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { openDatabaseReader, type RawDatabaseReader } from './database-reader.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from './test-database.js';
import { migratedPostgresDatabase } from './migrated-postgres.js';
import type { DestinationStream } from 'pino';
import type { OidcSettings } from '../../src/config/oidc-settings.js';
import { createLogger } from '../../src/logger.js';
import type { Resolver } from '../../src/webhooks/address-policy.js';
import {
  startWebhookWorker,
  type WebhookWorker,
  type WebhookWorkerSettings,
} from '../../src/webhooks/delivery-worker.js';

export type TokenSet = Record<Environment, Record<Scope, string>>;

export interface TestApp {
  app: FastifyInstance;
  /** The delivery worker, when the options asked for one. */
  webhookWorker: WebhookWorker | undefined;
  runtime: Runtime;
  /** The database the app runs on: TEST_ENGINE's, unless the options named one. */
  db: TestDatabase;
  /** The test's scratch directory (on SQLite it holds the database file, its WAL and the key file). */
  dir: string;
  /** The SQLite file, for SQLite-only tests that read it raw; undefined on PostgreSQL. */
  databasePath: string | undefined;
  /** API token secrets: workspace `default` and a second workspace `other`, every environment and scope. */
  tokens: { default: TokenSet; other: TokenSet };
  /** A raw read-only view of the database on a connection of its own: opened on first use, closed with the app. */
  reader(): Promise<RawDatabaseReader>;
  /** Starts listening on an ephemeral loopback port; returns the base URL. */
  listen(): Promise<string>;
  /** Closes the app, its runtime and its reader; drops the database unless the options handed it in. */
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Off unless given; a test may hand in a limiter on a clock of its own. */
  rateLimit?: RateLimitOption;
  /** UGS_ENCRYPTION_KEY to open the database with; the database's own key otherwise (SQLite: the key file). */
  encryptionKey?: string;
  /** Open this existing database (e.g. to reopen one another app used); the caller drops it. */
  database?: TestDatabase;
  /** SQLite only: the database `ugs.db` in this existing directory; the caller removes it. */
  dir?: string;
  /** Log through the service's own logger at this level into `destination`; no logging otherwise. */
  log?: { level: string; destination: DestinationStream };
  /** The services' time (e.g. one a test moves forward); the system clock otherwise. */
  clock?: Clock;
  /** false: open even a database with tokens under keys it lacks (as `ugs keys` does), to make an instance that fails on them. */
  requireAllKeys?: boolean;
  /** The public URL embed tokens are issued under; the runtime's default otherwise. */
  publicUrl?: () => string;
  /** Webhook addresses (private ones refused unless allowed) and, when `worker` is given, a delivery worker with those settings. */
  webhooks?: { allowPrivate?: boolean; resolve?: Resolver; worker?: Partial<WebhookWorkerSettings> };
  /** Count usage per group (as `ugs serve` does), written every `flushMs`; not counted unless given. */
  usage?: { flushMs: number };
  /** The web origins granted cross-origin access to /api (as `ugs serve --cors-origins`); none unless given. */
  corsOrigins?: string[];
  /** Console sign-in through an identity provider (as `ugs serve --oidc-*`); none unless given. */
  oidc?: OidcSettings;
  /** false: token sign-in switched off (as `ugs serve --token-sign-in off`). */
  tokenSignIn?: boolean;
  /** How long the app signs with the current key it read before reading it again: CURRENT_KEY_HELD_MS otherwise. */
  currentKeyHeldMs?: number;
}

/** A SQLite database in an existing directory, which stays when the database is "dropped". */
function sqliteDatabaseIn(dir: string): TestDatabase {
  const sqlitePath = join(dir, 'ugs.db');
  return {
    engine: 'sqlite',
    url: `sqlite:${sqlitePath}`,
    encryptionKey: undefined,
    dir,
    sqlitePath,
    drop: async () => undefined,
  };
}

async function databaseFor(options: TestAppOptions): Promise<{ db: TestDatabase; owned: boolean }> {
  if (options.database && options.dir) throw new Error('createTestApp takes `database` or `dir`, not both');
  if (options.database) return { db: options.database, owned: false };
  if (options.dir) return { db: sqliteDatabaseIn(options.dir), owned: false };
  // On PostgreSQL a copy of a migrated schema where the run has one: what the start would migrate is there.
  const migrated = TEST_ENGINE === 'postgres' ? await migratedPostgresDatabase() : undefined;
  return { db: migrated ?? (await createTestDatabase(TEST_ENGINE)), owned: true };
}

/**
 * A real app on a real database of the engine under test (UGS_TEST_ENGINE, see vitest.config.ts), with
 * API tokens of every kind ready to use.
 */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const { db, owned } = await databaseFor(options);
  let runtime: Runtime | undefined;
  let app: FastifyInstance | undefined;
  let reader: Promise<RawDatabaseReader> | undefined;
  let webhookWorker: WebhookWorker | undefined;
  const close = async () => {
    try {
      await reader?.then(
        (opened) => opened.close(),
        () => undefined,
      );
      await app?.close();
      await webhookWorker?.stop();
      await runtime?.close();
    } finally {
      if (owned) await db.drop();
    }
  };
  try {
    runtime = await openRuntime({
      databaseUrl: db.url,
      encryptionKey: options.encryptionKey ?? db.encryptionKey,
      clock: options.clock,
      requireAllKeys: options.requireAllKeys,
      publicUrl: options.publicUrl,
      allowPrivateWebhooks: options.webhooks?.allowPrivate,
      usage: options.usage,
      currentKeyHeldMs: options.currentKeyHeldMs,
    });
    const opened = runtime;
    const other =
      (await opened.store.findWorkspaceByName('other')) ??
      (await opened.services.workspaces.createWorkspace('other', { type: 'cli' }));
    const tokens = {
      default: await issueTokenSet(opened, opened.defaultWorkspace.id),
      other: await issueTokenSet(opened, other.id),
    };
    const logger = options.log ? createLogger(options.log.level, options.log.destination) : undefined;
    if (options.webhooks?.worker) {
      webhookWorker = startWebhookWorker({
        store: opened.store,
        cipher: opened.keys.keyring,
        clock: opened.clock,
        logger: logger ?? { info: () => undefined, warn: () => undefined },
        settings: { allowPrivate: options.webhooks.allowPrivate ?? false, ...options.webhooks.worker },
        resolve: options.webhooks.resolve,
      });
    }
    app = await buildApp({
      services: opened.services,
      logger: logger ?? false,
      rateLimit: options.rateLimit ?? 'off',
      version: 'test',
      publicUrl: opened.publicUrl,
      corsOrigins: options.corsOrigins,
      ...(options.oidc ? { oidc: options.oidc } : {}),
      ...(options.tokenSignIn === undefined ? {} : { tokenSignIn: options.tokenSignIn }),
      metrics: webhookWorker ? [webhookWorker.metrics.registry] : [],
    });
    await app.ready();
    const server = app;
    return {
      app: server,
      webhookWorker,
      runtime: opened,
      db,
      dir: db.dir,
      databasePath: db.sqlitePath,
      tokens,
      reader: () => (reader ??= openDatabaseReader(db)),
      listen: () => server.listen({ port: 0, host: '127.0.0.1' }),
      close,
    };
  } catch (error) {
    // Nothing may outlive a failed start: no pool holding connections, no schema left behind.
    await close().catch(() => undefined);
    throw error;
  }
}

async function issueTokenSet(runtime: Runtime, workspaceId: number): Promise<TokenSet> {
  const set = {} as TokenSet;
  for (const environment of ENVIRONMENTS) {
    set[environment] = {} as Record<Scope, string>;
    for (const scope of SCOPES) {
      const caller = {
        tenant: { workspaceId, environment },
        scope: 'admin' as const,
        actor: { type: 'cli' as const },
        requestId: null,
      };
      const { secret } = await runtime.services.apiTokens.createApiToken(caller, {
        name: `${scope}-${environment}`,
        scope,
        environment,
      });
      set[environment][scope] = secret;
    }
  }
  return set;
}

/** One real app (createTestApp with `options`) for the enclosing describe block: opened before its tests, closed after. */
export function useTestApp(options: TestAppOptions = {}): { readonly t: TestApp } {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await createTestApp(options);
  });
  afterAll(async () => {
    await app?.close();
  });
  return {
    get t() {
      if (!app) throw new Error('the test app exists only inside tests');
      return app;
    },
  };
}
