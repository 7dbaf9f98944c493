/*
 * Helpers shared by the security, concurrency, fuzz and fault suites: a test app with a read-only
 * view of its database, extra API tokens, the failure-envelope assertion, a second in-process
 * instance on the same database, and `ugs serve` processes.
 */
import { spawn, execFileSync, type ChildProcessByStdio } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { loadEncryptionKey } from '../../src/config/encryption-key.js';
import { systemClock } from '../../src/domain/clock.js';
import { createTokenCipher } from '../../src/domain/secrets.js';
import { createServices } from '../../src/domain/services.js';
import type { Environment, Scope, Tenant } from '../../src/domain/tenancy.js';
import { buildApp } from '../../src/http/app.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { ApiResponse } from '../support/http-client.js';
import { createTestApp, type TestApp, type TestAppOptions } from '../support/test-app.js';

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

/** Opens a test app with a reader on its database for the enclosing suite, and closes both after it. */
export function useTestApp(options: TestAppOptions = {}): AppFixture {
  const fixture = {} as AppFixture;
  beforeAll(async () => {
    fixture.t = await createTestApp(options);
    fixture.reader = new DatabaseReader(fixture.t.databasePath);
    fixture.tenant = await tenantOf(fixture.t, 'default', 'Customer');
  });
  afterAll(async () => {
    fixture.reader?.close();
    await fixture.t?.close();
  });
  return fixture;
}

/** One more API token secret, beyond the ready-made set of the test app. */
export async function issueApiToken(t: TestApp, tenant: Tenant, scope: Scope, name = `extra-${scope}`): Promise<string> {
  const caller = { tenant, scope: 'admin' as const, actor: { type: 'cli' as const }, requestId: null };
  const { secret } = await t.runtime.services.apiTokens.createApiToken(caller, { name, scope, environment: tenant.environment });
  return secret;
}

/** A failure response: the status, the code, and the envelope with the request id of the response. */
export function expectFailure(response: ApiResponse, status: number, code: string): void {
  expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status, code });
  expect(response.body).toMatchObject({ success: 0, error: { message: expect.any(String), request_id: response.headers['x-request-id'] } });
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
 * A second, read-only connection to the test database. WAL lets it read what the app has committed
 * while the app keeps writing, so tests can check the stored state without going through the API.
 */
export class DatabaseReader {
  private readonly db: Database.Database;

  constructor(databasePath: string) {
    this.db = new Database(databasePath, { readonly: true, fileMustExist: true });
  }

  snapshot(tenant: Tenant): DatabaseSnapshot {
    const userGroups = this.db
      .prepare(
        `SELECT g.*, (SELECT json_group_array(json_array(m.schema_id, m.data_source_id) ORDER BY m.schema_id)
           FROM user_group_mappings m WHERE m.team_id = g.team_id) AS mapping_rows
         FROM user_groups g WHERE g.workspace_id = ? AND g.environment = ? ORDER BY g.team_id`,
      )
      .all(tenant.workspaceId, tenant.environment);
    return {
      userGroups,
      tenantAuditEvents: this.count('audit_events WHERE workspace_id = ? AND environment = ?', tenant.workspaceId, tenant.environment),
      allAuditEvents: this.count('audit_events'),
      schemas: this.count('schemas'),
      dataSources: this.count('data_sources'),
    };
  }

  /** How many groups of the tenant have this provided id. */
  countGroups(tenant: Tenant, providedId: string): number {
    return this.count('user_groups WHERE workspace_id = ? AND environment = ? AND provided_id = ?', tenant.workspaceId, tenant.environment, providedId);
  }

  countAuditEvents(tenant: Tenant, action: string, providedId: string): number {
    return this.count(
      'audit_events WHERE workspace_id = ? AND environment = ? AND action = ? AND provided_id = ?',
      tenant.workspaceId,
      tenant.environment,
      action,
      providedId,
    );
  }

  workspaceId(name: WorkspaceName): number {
    const row = this.db.prepare('SELECT id FROM workspaces WHERE name = ?').get(name) as { id: number } | undefined;
    if (!row) throw new Error(`workspace ${name} is missing from the database`);
    return row.id;
  }

  close(): void {
    this.db.close();
  }

  private count(from: string, ...params: unknown[]): number {
    return (this.db.prepare(`SELECT count(*) AS n FROM ${from}`).get(...params) as { n: number }).n;
  }
}

/** Creates a group with a write-scoped token and returns it as the API shows it. */
export async function createUserGroup(
  call: (req: { method: string; path: string; token: string; body: unknown }) => Promise<ApiResponse>,
  token: string,
  body: Record<string, unknown>,
) {
  const response = await call({ method: 'GET', path: '/api/user', token, body });
  expect(response.status, response.raw).toBe(200);
  expect(response.body.new_user_group).toBe(true);
  return response.body.user_group as UserGroupBody;
}

/** A user group as the API returns it. */
export interface UserGroupBody {
  team_id: number;
  token: string;
  name: string;
  provided_id: string;
  properties: Record<string, unknown> | null;
  mapping: Record<string, string>;
  api_environment_tag: Environment;
  created_at: string;
  updated_at: string;
}

/**
 * A second instance of the service on the database of a test app, wired as the runtime wires it but
 * with its own SQLite busy timeout, so that lock contention can be tested without 5-second waits.
 */
export async function openSecondInstance(databasePath: string, busyTimeoutMs: number): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  const store = openSqliteStore({ path: databasePath, busyTimeoutMs });
  const cipher = createTokenCipher(loadEncryptionKey({ engine: 'sqlite', path: databasePath }, undefined));
  const services = createServices({ store, cipher, clock: systemClock });
  const app = await buildApp({ services, store, logger: false, rateLimitPerMinute: 'off', version: 'test' });
  await app.ready();
  return {
    app,
    async close() {
      await app.close();
      await store.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// `ugs serve` as a separate process

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The CLI runs from dist: build it unless a build is already there (`npm test` builds first). */
export function ensureBuilt(): void {
  if (!existsSync(join(REPO_ROOT, 'dist', 'cli', 'main.js'))) {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, stdio: 'inherit' });
  }
}

export interface ServeProcess {
  baseUrl: string;
  /** Everything the process wrote to stdout up to the moment it was listening. */
  stdout: string;
  stop(): Promise<void>;
}

const LISTENING = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/;

/** Starts `ugs serve` on an ephemeral port and resolves once it listens. */
export async function startServe(databasePath: string, env: Record<string, string> = {}): Promise<ServeProcess> {
  const { UGS_ENCRYPTION_KEY: _ignored, ...inherited } = process.env;
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'ugs.js'), 'serve', '--port', '0', '--database', `sqlite:${databasePath}`], {
    cwd: REPO_ROOT,
    env: { ...inherited, UGS_RATE_LIMIT: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
  };
  try {
    const baseUrl = await waitForListening(child, () => stdout, () => stderr);
    // The banner is written right after listening starts; give it the same chance to arrive.
    await new Promise((resolve) => setTimeout(resolve, 200));
    return { baseUrl, stdout, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function waitForListening(child: ChildProcessByStdio<null, Readable, Readable>, stdout: () => string, stderr: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`ugs serve did not start in time:\n${stdout()}\n${stderr()}`)), 20_000);
    const check = () => {
      const match = LISTENING.exec(stdout());
      if (match?.[1]) finish(() => resolve(match[1]!));
    };
    const onExit = (code: number | null) => fail(new Error(`ugs serve exited with ${code}:\n${stdout()}\n${stderr()}`));
    const finish = (then: () => void) => {
      clearTimeout(timer);
      child.stdout.off('data', check);
      child.off('exit', onExit);
      then();
    };
    const fail = (error: Error) => finish(() => reject(error));
    child.stdout.on('data', check);
    child.once('exit', onExit);
    check();
  });
}

/** The first-start admin token of an environment, from the banner on stdout. */
export function bannerToken(stdout: string, environment: Environment): string {
  const prefix = environment === 'Customer' ? 'ugs_live_' : 'ugs_test_';
  const match = new RegExp(`^\\s+${environment}\\s+(${prefix}[0-9a-f]{64})$`, 'm').exec(stdout);
  if (!match?.[1]) throw new Error(`no ${environment} admin token in the banner:\n${stdout}`);
  return match[1];
}
