import { beforeAll, expect } from 'vitest';
import type { DataSourceRecord } from '../../src/domain/data-sources/data-source.records.js';
import { injectClient, socketClient, type Client } from '../support/http-client.js';
import { useTestApp, type TestApp, type TestAppOptions } from '../support/test-app.js';
import { uniqueId } from '../support/unique-id.js';
import { adminCaller, type As, type Workspace } from '../support/callers.js';

export const USER_GROUP_TOKEN = /^ugt_[0-9a-f]{64}$/;
export const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export { expectError, JSON_CONTENT_TYPE } from '../support/error-envelope.js';

export interface Transport {
  name: string;
  connect(t: TestApp): Promise<Client>;
}

export const TRANSPORTS: Transport[] = [
  { name: 'inject', connect: async (t) => injectClient(t.app) },
  { name: 'a real socket', connect: async (t) => socketClient(await t.listen()) },
];

/** One real app (with `options`) and a client over `transport` for the enclosing describe block. */
export function useClient(
  transport: Transport,
  options: TestAppOptions = {},
): { readonly t: TestApp; readonly client: Client } {
  const holder = useTestApp(options);
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

/*
 * Schema and data-source ids are numbers of their workspace (docs/api.md#schema-and-data-source-ids), so another workspace's first
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

// ---------------------------------------------------------------------------------------------
// Reading /api/user's answers.

export { expectSuccess } from '../support/success-envelope.js';

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
