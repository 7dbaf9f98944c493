import { afterAll, beforeAll, expect } from 'vitest';
import type { DataSourceRecord } from '../../src/domain/data-sources/data-source.records.js';
import type { Caller, Environment, Scope } from '../../src/domain/tenancy.js';
import { injectClient, socketClient, type ApiRequest, type ApiResponse, type Client } from '../support/http-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { uniqueId } from '../support/unique-id.js';

export const USER_PATH = '/api/user';
export const VERIFY_PATH = '/api/user/verify';
export const USER_GROUP_TOKEN = /^ugt_[0-9a-f]{64}$/;
export const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export { expectError, JSON_CONTENT_TYPE } from '../support/error-envelope.js';

export type Workspace = 'default' | 'other';
/** A request before an API token is chosen for it. */
export type UnsignedRequest = Omit<ApiRequest, 'token'>;

/** Who sends a request: defaults to the default workspace's Customer admin. */
export interface As {
  workspace?: Workspace;
  environment?: Environment;
  scope?: Scope;
}

export function apiToken(t: TestApp, as: As = {}): string {
  return t.tokens[as.workspace ?? 'default'][as.environment ?? 'Customer'][as.scope ?? 'admin'];
}

/** One real app for the enclosing describe block. */
export function useTestApp(): { readonly t: TestApp } {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await createTestApp();
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

export interface Transport {
  name: string;
  connect(t: TestApp): Promise<Client>;
}

export const TRANSPORTS: Transport[] = [
  { name: 'inject', connect: async (t) => injectClient(t.app) },
  { name: 'a real socket', connect: async (t) => socketClient(await t.listen()) },
];

/** One real app and a client over `transport` for the enclosing describe block. */
export function useClient(transport: Transport): { readonly t: TestApp; readonly client: Client } {
  const holder = useTestApp();
  let client: Client | undefined;
  beforeAll(async () => {
    client = await transport.connect(holder.t);
  });
  return {
    get t() {
      return holder.t;
    },
    get client() {
      if (!client) throw new Error('the client exists only inside tests');
      return client;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Setting up state through the domain services (the HTTP API under test is not needed for it).

export async function workspaceId(t: TestApp, workspace: Workspace = 'default'): Promise<number> {
  if (workspace === 'default') return t.runtime.defaultWorkspace.id;
  const found = await t.runtime.store.findWorkspaceByName(workspace);
  if (!found) throw new Error(`workspace ${workspace} is missing`);
  return found.id;
}

export async function adminCaller(t: TestApp, as: Omit<As, 'scope'> = {}): Promise<Caller> {
  return {
    tenant: { workspaceId: await workspaceId(t, as.workspace), environment: as.environment ?? 'Customer' },
    scope: 'admin',
    actor: { type: 'cli' },
    requestId: null,
  };
}

/*
 * Schema and data-source ids are numbers of their workspace (SPEC §12), so another workspace's first
 * schema is numbered 1 too. Outside the default workspace the seeds choose ids far from the default
 * workspace's, so that "another workspace's id" names something that exists there and not here.
 */
let foreignId = 900_000;
const chosenIdIn = (workspace: Workspace | undefined) =>
  workspace === undefined || workspace === 'default' ? {} : { id: (foreignId += 1) };

export async function seedSchema(t: TestApp, workspace: Workspace = 'default'): Promise<number> {
  const caller = await adminCaller(t, { workspace });
  return (await t.runtime.services.schemas.createSchema(caller, { name: uniqueId('schema'), ...chosenIdIn(workspace) }))
    .id;
}

export async function seedDataSource(
  t: TestApp,
  schemaId: number,
  as: Omit<As, 'scope'> = {},
): Promise<DataSourceRecord> {
  const caller = await adminCaller(t, as);
  return t.runtime.services.dataSources.createDataSource(caller, {
    providedId: uniqueId('ds'),
    name: 'Data source',
    schemaId,
    ...chosenIdIn(as.workspace),
  });
}

/** Two schemas with one data source each, in the default workspace's Customer environment. */
export interface Catalog {
  schemaA: number;
  schemaB: number;
  dsA: DataSourceRecord;
  dsB: DataSourceRecord;
}

export async function seedCatalog(t: TestApp): Promise<Catalog> {
  const schemaA = await seedSchema(t);
  const schemaB = await seedSchema(t);
  return { schemaA, schemaB, dsA: await seedDataSource(t, schemaA), dsB: await seedDataSource(t, schemaB) };
}

export interface SeededGroup {
  id: string;
  token: string;
  teamId: number;
}

export async function seedGroup(
  t: TestApp,
  options: { as?: Omit<As, 'scope'>; mapping?: Record<string, number | string>; id?: string } = {},
): Promise<SeededGroup> {
  const caller = await adminCaller(t, options.as);
  const id = options.id ?? uniqueId('group');
  const { userGroup } = await t.runtime.services.userGroups.getOrCreateUserGroup(caller, {
    userGroupId: id,
    ...(options.mapping ? { mapping: options.mapping } : {}),
  });
  return { id, token: userGroup.token, teamId: userGroup.teamId };
}

// ---------------------------------------------------------------------------------------------
// Talking to /api/user.

export function userGroupApi(client: Client, token: string) {
  return {
    getOrCreate: (body: unknown) => client({ method: 'GET', path: USER_PATH, token, body }),
    update: (body: unknown) => client({ method: 'PUT', path: USER_PATH, token, body }),
    rotate: (currentToken: string) =>
      client({ method: 'POST', path: USER_PATH, token, body: { current_token: currentToken } }),
    remove: (body: unknown) => client({ method: 'DELETE', path: USER_PATH, token, body }),
    verify: (groupToken: string) => client({ method: 'POST', path: VERIFY_PATH, token, body: { token: groupToken } }),
  };
}

export type UserGroupApi = ReturnType<typeof userGroupApi>;

/** Asserts a 200 success envelope and returns the body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function expectSuccess(res: ApiResponse): any {
  expect({ status: res.status, body: res.body }).toMatchObject({ status: 200, body: { success: 1 } });
  return res.body;
}

// ---------------------------------------------------------------------------------------------
// "Nothing is changed": the whole database, read through a connection of its own.

/**
 * Every row of every table, the identity counters included (SQLite's sqlite_sequence, PostgreSQL's
 * sequences), so a burned team_id shows. The one column left out is api_tokens.last_used_at:
 * authenticating a request is bookkeeping, not a change.
 */
export async function snapshotDatabase(t: TestApp): Promise<Record<string, unknown[]>> {
  const tables = await (await t.reader()).readAll();
  tables.api_tokens = (tables.api_tokens ?? []).map(({ last_used_at: _ignored, ...row }) => row);
  return tables;
}

/** Runs `action` and asserts that the database is exactly as it was before. */
export async function expectUnchanged<T>(t: TestApp, action: () => Promise<T>): Promise<T> {
  const before = await snapshotDatabase(t);
  const result = await action();
  expect(await snapshotDatabase(t)).toEqual(before);
  return result;
}

// ---------------------------------------------------------------------------------------------
// Values at and over the input limits.

/** An object `levels` deep: level 1 is the object itself. */
export function nestedObject(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let level = 1; level < levels; level += 1) value = { next: value };
  return value;
}

/** An object whose JSON serialization is exactly `bytes` long. */
export function propertiesOfSize(bytes: number): Record<string, string> {
  const overhead = JSON.stringify({ p: '' }).length;
  return { p: 'x'.repeat(bytes - overhead) };
}

/** A JSON body of exactly `bytes` bytes. */
export function bodyOfSize(bytes: number, field = 'name'): string {
  const head = `{"user_group_id":"big","${field}":"`;
  const tail = '"}';
  return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
}
