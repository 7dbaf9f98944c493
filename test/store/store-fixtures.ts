import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { ApiTokenCheck, ApiTokenState } from '../../src/domain/api-tokens/api-token-check.js';
import { AppError, isAppError } from '../../src/domain/errors.js';
import type { ErrorCode } from '../../src/domain/errors.js';
import type { NewApiToken } from '../../src/domain/api-tokens/api-token.records.js';
import type { AuditContext, AuditEventRecord, FieldChanges } from '../../src/domain/audit/audit.records.js';
import type { DataSourceRecord } from '../../src/domain/data-sources/data-source.records.js';
import type { SchemaRecord } from '../../src/domain/schemas/schema.records.js';
import type { NewSigningKey } from '../../src/domain/signing-keys/signing-key.records.js';
import type { NewUserGroup, UserGroupRecord } from '../../src/domain/user-groups/user-group.records.js';
import type { Workspace } from '../../src/domain/workspaces/workspace.records.js';
import type { Actor, Environment, Tenant } from '../../src/domain/tenancy.js';
import type { Store } from '../../src/domain/store.port.js';

export const T0 = '2026-11-22T10:00:00.000Z';
export const T1 = '2026-11-22T11:00:00.000Z';
export const T2 = '2026-11-22T12:00:00.000Z';

export const CLI: Actor = { type: 'cli' };
export const API_ACTOR: Actor = { type: 'api_token', apiTokenId: 7, name: 'deploy bot' };

export function auditContext(overrides: Partial<AuditContext> = {}): AuditContext {
  return { at: T0, actor: CLI, requestId: 'req-1', ...overrides };
}

/** A fresh opaque string standing in for a SHA-256 hex digest or a ciphertext. */
export function randomHex(): string {
  return randomBytes(32).toString('hex');
}

/** A signing key of `issuer` (a workspace's environment) made at `createdAt`: a kid of its own, random material. */
export function newSigningKey(issuer: Tenant, createdAt = T0): NewSigningKey {
  return {
    ...issuer,
    kid: `kid-${randomHex().slice(0, 16)}`,
    // Key order and types as a JWK has them: the store hands back the same object.
    publicJwk: { kty: 'EC', crv: 'P-256', x: randomHex(), y: randomHex() },
    privateKeyCiphertext: randomHex(),
    createdAt,
  };
}

export function newApiToken(tenant: Tenant, overrides: Partial<NewApiToken> = {}): NewApiToken {
  return {
    workspaceId: tenant.workspaceId,
    environment: tenant.environment,
    name: 'token',
    scope: 'write',
    tokenHash: randomHex(),
    createdAt: T0,
    ...overrides,
  };
}

export function newGroup(tenant: Tenant, providedId: string, overrides: Partial<NewUserGroup> = {}): NewUserGroup {
  return {
    tenant,
    providedId,
    name: `Group ${providedId}`,
    tokenHash: randomHex(),
    tokenCiphertext: randomHex(),
    properties: null,
    mapping: [],
    parentProvidedId: null,
    isDemoGroup: false,
    tags: [],
    accessRules: [],
    createdAt: T0,
    ...overrides,
  };
}

/** Creates a group whose provided id must be new in its tenant, and returns it. */
export async function createGroup(
  store: Store,
  tenant: Tenant,
  providedId: string,
  overrides: Partial<NewUserGroup> = {},
): Promise<UserGroupRecord> {
  const result = await store.insertUserGroupIfAbsent(newGroup(tenant, providedId, overrides), auditContext());
  expect(result.created).toBe(true);
  return result.group;
}

/**
 * Follows a cursor from the first page to the last (a page shorter than `limit`), checking that no
 * page is longer than `limit`; returns every page.
 */
export async function allPages<T>(
  limit: number,
  fetchPage: (cursor: number | undefined) => Promise<T[]>,
  cursorOf: (last: T) => number,
): Promise<T[][]> {
  const pages: T[][] = [];
  let cursor: number | undefined;
  for (;;) {
    const page = await fetchPage(cursor);
    expect(page.length).toBeLessThanOrEqual(limit);
    pages.push(page);
    const last = page.at(-1);
    if (page.length < limit || last === undefined) return pages;
    cursor = cursorOf(last);
  }
}

/** Two workspaces, both environments, two schemas and a few data sources: the world every test starts from. */
export interface Fixture {
  workspace: Workspace;
  otherWorkspace: Workspace;
  customer: Tenant;
  testing: Tenant;
  otherCustomer: Tenant;
  schemaA: SchemaRecord;
  schemaB: SchemaRecord;
  otherSchema: SchemaRecord;
  /** Customer, schema A, provided id "ds-a". */
  customerA: DataSourceRecord;
  /** Customer, schema B, provided id "ds-b". */
  customerB: DataSourceRecord;
  /** Testing, schema A, provided id "ds-a" too: provided ids are per environment. */
  testingA: DataSourceRecord;
  /** The other workspace's Customer environment, provided id "ds-a". */
  otherA: DataSourceRecord;
}

export async function seed(store: Store): Promise<Fixture> {
  const context = auditContext();
  const { workspace } = await store.ensureWorkspace('acme', context);
  const { workspace: otherWorkspace } = await store.ensureWorkspace('globex', context);
  const tenant = (ws: Workspace, environment: Environment): Tenant => ({ workspaceId: ws.id, environment });
  const customer = tenant(workspace, 'Customer');
  const testing = tenant(workspace, 'Testing');
  const otherCustomer = tenant(otherWorkspace, 'Customer');
  const schemaA = await store.insertSchema(workspace.id, 'sales', context);
  const schemaB = await store.insertSchema(workspace.id, 'marketing', context);
  // Ids are numbers of their workspace (docs/api.md#schema-and-data-source-ids): the other workspace's are chosen apart from this
  // one's, so that a lookup of one of them in the wrong workspace shows it is not found there.
  const otherSchema = await store.insertSchema(otherWorkspace.id, 'sales', context, 77);
  const dataSource = (t: Tenant, providedId: string, schema: SchemaRecord, id?: number) =>
    store.insertDataSource(
      { tenant: t, providedId, name: `DS ${providedId}`, schemaId: schema.id, createdAt: T0, ...(id ? { id } : {}) },
      context,
    );
  return {
    workspace,
    otherWorkspace,
    customer,
    testing,
    otherCustomer,
    schemaA,
    schemaB,
    otherSchema,
    customerA: await dataSource(customer, 'ds-a', schemaA),
    customerB: await dataSource(customer, 'ds-b', schemaB),
    testingA: await dataSource(testing, 'ds-a', schemaA),
    otherA: await dataSource(otherCustomer, 'ds-a', otherSchema, 901),
  };
}

/** Runs `action` and returns the audit events of `workspaceId` it wrote, oldest first. */
export async function auditWrittenBy(
  store: Store,
  workspaceId: number,
  action: () => Promise<unknown>,
): Promise<AuditEventRecord[]> {
  const list = () => store.listAuditEvents({ workspaceId, limit: 10_000 });
  const lastIdBefore = (await list())[0]?.id ?? 0;
  await action();
  return (await list()).filter((event) => event.id > lastIdBefore).reverse();
}

export function onlyOne<T>(items: T[]): T {
  expect(items).toHaveLength(1);
  return items[0] as T;
}

export async function expectAppError(promise: Promise<unknown>, code: ErrorCode, field?: string): Promise<void> {
  const error: unknown = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(isAppError(error), `expected AppError ${code}, got ${String(error)}`).toBe(true);
  if (!isAppError(error)) return;
  expect(error.code).toBe(code);
  if (field !== undefined) expect(error.field).toBe(field);
}

export const SAMPLE_CHANGES: FieldChanges = { name: { before: 'Old', after: 'New' } };

/** Properties that exercise every JSON type, nesting, and characters outside ASCII. */
export const RICH_PROPERTIES = {
  filterValue: 'value',
  unicode: 'Zürich — 東京 🎉 e\u0301 "quoted" \\ back\nslash',
  'key.with.dots': true,
  '': 'empty key',
  numbers: [0, -1, 1.5, -0.25, 1e21, 123456789.125, Number.MAX_SAFE_INTEGER, 0.1],
  booleans: { yes: true, no: false },
  nothing: null,
  nested: { a: { b: { c: [1, [2, [3, { d: 'deep' }]]] } } },
  emptyArray: [],
  emptyObject: {},
};

/**
 * A remembered API token's check as the domain hands it to a hot read (src/domain/api-tokens/api-token-check.ts),
 * recording what the store settled it with; a token no longer live throws as the domain's does. The
 * hot reads admit the request once the lookup settled the check (the admitting group reads): an
 * admission before any settlement throws, so a store that admitted unconfirmed would fail.
 */
export function recordingTokenCheck(token: { id: number; tokenHash: string }): {
  check: ApiTokenCheck;
  settled: Array<ApiTokenState | null>;
} {
  const settled: Array<ApiTokenState | null> = [];
  let admitted = false;
  const check: ApiTokenCheck = {
    apiTokenId: token.id,
    apiTokenHash: token.tokenHash,
    get settled() {
      return settled.length > 0;
    },
    get admitted() {
      return admitted;
    },
    settle: (state) => {
      settled.push(state);
      if (!state?.live) throw new AppError('invalid_api_token', 'revoked');
    },
    admit: async () => {
      if (settled.length === 0) throw new Error('admitted before a lookup settled the check');
      admitted = true;
    },
  };
  return { check, settled };
}

/** Migrates a database holding, from before migration 9, one signing key `legacy-kid` of `workspaceId`: it becomes Customer's. */
export async function expectLegacyKeyMigrated(store: Store, workspaceId: number): Promise<void> {
  await store.migrate();
  expect(await store.findCurrentSigningKey({ workspaceId, environment: 'Customer' })).toMatchObject({
    kid: 'legacy-kid',
    environment: 'Customer',
  });
  expect(await store.findCurrentSigningKey({ workspaceId, environment: 'Testing' })).toBeNull();
}
