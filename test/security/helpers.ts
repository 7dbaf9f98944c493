/*
 * Helpers shared by the security, concurrency, fuzz and fault suites: a test app with a read-only
 * view of its database, extra API tokens, the failure-envelope assertion, and a second in-process
 * instance on the same database. (`ugs serve` processes: test/support/serve-process.ts.)
 */
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { beforeAll } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { parseDatabaseUrl } from '../../src/config/database-url.js';
import { loadEncryptionKeys } from '../../src/config/encryption-key.js';
import { systemClock } from '../../src/domain/clock.js';
import { createKeyring } from '../../src/domain/encryption-keys/keyring.js';
import { createAddressPolicy } from '../../src/webhooks/address-policy.js';
import { createServices } from '../../src/domain/services.js';
import type { Environment, Tenant } from '../../src/domain/tenancy.js';
import { buildApp } from '../../src/http/app.js';
import { DEFAULT_PUBLIC_URL } from '../../src/runtime.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { openDatabaseReader, type RawDatabaseReader, type Row } from '../support/database-reader.js';
import type { ApiResponse } from '../support/http-client.js';
import { useTestApp, type TestApp, type TestAppOptions } from '../support/test-app.js';
import type { TestDatabase } from '../support/test-database.js';

export type WorkspaceName = 'default' | 'other';

/** A well-formed user group token that no group holds. */
export function unusedUserGroupToken(): string {
  return `ugt_${randomBytes(32).toString('hex')}`;
}

export async function tenantOf(t: TestApp, workspace: WorkspaceName, environment: Environment): Promise<Tenant> {
  const found = await t.runtime.store.findWorkspaceByName(workspace);
  if (!found) throw new Error(`workspace ${workspace} is missing from the test database`);
  return { workspaceId: found.id, environment };
}

export interface AppFixture {
  t: TestApp;
  /** Reads the test app's database directly. */
  reader: DatabaseReader;
  /** Workspace default, environment Customer: where the suites' groups live. */
  tenant: Tenant;
}

/** useTestApp for the enclosing suite, with a reader on its database and the tenant its groups live in. */
export function useTestAppWithReader(options: TestAppOptions = {}): AppFixture {
  const app = useTestApp(options);
  const fixture = {} as AppFixture;
  beforeAll(async () => {
    fixture.t = app.t;
    fixture.reader = await DatabaseReader.of(fixture.t);
    fixture.tenant = await tenantOf(fixture.t, 'default', 'Customer');
  });
  return fixture;
}

/** The response body with the one part that legitimately differs between two requests removed. */
function withoutRequestId(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || !('error' in body)) return body;
  const { error, ...rest } = body as { error: Record<string, unknown> };
  const { request_id: _requestId, ...errorRest } = error;
  return { ...rest, error: errorRest };
}

/** What a response reveals: status, body but its request id, and which headers it carries. */
export function observable(response: ApiResponse) {
  const headerNames = Object.keys(response.headers)
    .filter((name) => name !== 'date')
    .sort();
  return { status: response.status, body: withoutRequestId(response.body), headerNames };
}

export interface DatabaseSnapshot {
  /** Every column of the tenant's groups, with their mapping rows. */
  userGroups: unknown[];
  tenantAuditEvents: number;
  allAuditEvents: number;
  schemas: number;
  dataSources: number;
}

/**
 * The stored state of the test database, read on a read-only connection of its own, so tests can
 * check it without going through the API. It sees what the app has committed while the app keeps
 * writing (SQLite's WAL; PostgreSQL's READ COMMITTED).
 */
export class DatabaseReader {
  private constructor(
    private readonly raw: RawDatabaseReader,
    private readonly owned: boolean,
  ) {}

  /** A reader of its own on `db`: close it when done. */
  static async open(db: TestDatabase): Promise<DatabaseReader> {
    return new DatabaseReader(await openDatabaseReader(db), true);
  }

  /** The test app's reader, which closes with the app. */
  static async of(t: TestApp): Promise<DatabaseReader> {
    return new DatabaseReader(await t.reader(), false);
  }

  async snapshot(tenant: Tenant): Promise<DatabaseSnapshot> {
    const groups = await this.raw.select(
      'SELECT * FROM user_groups WHERE workspace_id = ? AND environment = ? ORDER BY team_id',
      tenant.workspaceId,
      tenant.environment,
    );
    const mappings = await this.raw.select<{ team_id: number; schema_id: number; data_source_id: number }>(
      `SELECT m.team_id, m.schema_id, m.data_source_id FROM user_group_mappings m JOIN user_groups g ON g.team_id = m.team_id
       WHERE g.workspace_id = ? AND g.environment = ? ORDER BY m.team_id, m.schema_id`,
      tenant.workspaceId,
      tenant.environment,
    );
    const userGroups = groups.map((group) => ({
      ...group,
      mapping_rows: mappings
        .filter((row) => row.team_id === group.team_id)
        .map((row) => [row.schema_id, row.data_source_id]),
    }));
    return {
      userGroups,
      tenantAuditEvents: await this.raw.count(
        'audit_events WHERE workspace_id = ? AND environment = ?',
        tenant.workspaceId,
        tenant.environment,
      ),
      allAuditEvents: await this.raw.count('audit_events'),
      schemas: await this.raw.count('schemas'),
      dataSources: await this.raw.count('data_sources'),
    };
  }

  /**
   * Everything of one tenant that a caller could see or change: its groups with their mapping rows,
   * its data sources, its API tokens (but for last_used_at, which the tenant's own requests bump in
   * the background), its audit events and its workspace's schemas and workspace-wide events.
   */
  async tenantState(tenant: Tenant) {
    const inTenant = [tenant.workspaceId, tenant.environment] as const;
    return {
      userGroups: (await this.snapshot(tenant)).userGroups as Row[],
      dataSources: await this.raw.select(
        'SELECT * FROM data_sources WHERE workspace_id = ? AND environment = ? ORDER BY id',
        ...inTenant,
      ),
      apiTokens: await this.raw.select(
        'SELECT id, workspace_id, environment, name, scope, token_hash, created_at, revoked_at FROM api_tokens WHERE workspace_id = ? AND environment = ? ORDER BY id',
        ...inTenant,
      ),
      auditEvents: await this.raw.select(
        'SELECT * FROM audit_events WHERE workspace_id = ? AND (environment = ? OR environment IS NULL) ORDER BY id',
        ...inTenant,
      ),
      schemas: await this.raw.select('SELECT * FROM schemas WHERE workspace_id = ? ORDER BY id', tenant.workspaceId),
    };
  }

  /** How many groups of the tenant have this provided id. */
  countGroups(tenant: Tenant, providedId: string): Promise<number> {
    return this.raw.count(
      'user_groups WHERE workspace_id = ? AND environment = ? AND provided_id = ?',
      tenant.workspaceId,
      tenant.environment,
      providedId,
    );
  }

  countAuditEvents(tenant: Tenant, action: string, providedId: string): Promise<number> {
    return this.raw.count(
      'audit_events WHERE workspace_id = ? AND environment = ? AND action = ? AND provided_id = ?',
      tenant.workspaceId,
      tenant.environment,
      action,
      providedId,
    );
  }

  async workspaceId(name: WorkspaceName): Promise<number> {
    const [row] = await this.raw.select<{ id: number }>('SELECT id FROM workspaces WHERE name = ?', name);
    if (!row) throw new Error(`workspace ${name} is missing from the database`);
    return row.id;
  }

  async close(): Promise<void> {
    if (this.owned) await this.raw.close();
  }
}

/**
 * Another connection takes the write lock of the whole database and keeps it until released: SQLite's
 * exclusive lock; on PostgreSQL an EXCLUSIVE lock on every table, which (like SQLite's WAL mode) lets
 * plain reads through and makes every write wait.
 */
export async function holdWriteLock(db: TestDatabase): Promise<() => Promise<void>> {
  if (db.engine === 'sqlite') {
    const connection = new Database(db.sqlitePath!, { fileMustExist: true });
    connection.exec('BEGIN EXCLUSIVE');
    return async () => {
      connection.exec('ROLLBACK');
      connection.close();
    };
  }
  const client = new pg.Client({ connectionString: db.url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ name: string }>(
      'SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename',
    );
    await client.query(`LOCK TABLE ${rows.map((row) => row.name).join(', ')} IN EXCLUSIVE MODE`);
  } catch (error) {
    await client.end();
    throw error;
  }
  return async () => {
    await client.query('ROLLBACK');
    await client.end();
  };
}

/**
 * A second instance of the service on the database of a test app, wired as the runtime wires it but
 * with its own, short wait for a lock held by another connection (SQLite's busy timeout, PostgreSQL's
 * statement timeout), so that lock contention can be tested without 5-second waits.
 */
export async function openSecondInstance(
  db: TestDatabase,
  lockWaitMs: number,
): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  const location = parseDatabaseUrl(db.url);
  const store =
    location.engine === 'sqlite'
      ? openSqliteStore({ path: location.path, busyTimeoutMs: lockWaitMs })
      : openPostgresStore({ url: location.url, statementTimeoutMs: lockWaitMs, poolSize: 4 });
  const cipher = createKeyring(loadEncryptionKeys(location, db.encryptionKey).keys);
  const services = createServices({
    store,
    cipher,
    clock: systemClock,
    publicUrl: () => DEFAULT_PUBLIC_URL,
    webhookAddresses: createAddressPolicy({ allowPrivate: false }),
  });
  const app = await buildApp({
    services,
    logger: false,
    rateLimit: 'off',
    version: 'test',
    publicUrl: () => DEFAULT_PUBLIC_URL,
  });
  await app.ready();
  return {
    app,
    async close() {
      await app.close();
      await store.close();
    },
  };
}
