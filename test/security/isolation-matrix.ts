/*
 * The isolation matrix: every ordered pair of tenants (2 workspaces × 2 environments), every
 * scope of the caller's API token, and every operation that can name another tenant's object. An
 * operation answers exactly as it does for an object that exists nowhere and changes nothing, except
 * where the docs let an admin token act across its own workspace (docs/api.md#the-admin-api):
 * there it reaches the object. The test files list the operations; this module runs them.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ENVIRONMENTS,
  SCOPES,
  scopeIncludes,
  type Environment,
  type Scope,
  type Tenant,
} from '../../src/domain/tenancy.js';
import { inject, type ApiRequest, type ApiResponse } from '../support/http-client.js';
import {
  observable,
  tenantOf,
  unusedUserGroupToken,
  type DatabaseReader,
  type WorkspaceName,
  useTestAppWithReader,
} from './helpers.js';
import { makeGroup, type UserGroup } from '../support/group-maker.js';

export interface TenantName {
  workspace: WorkspaceName;
  environment: Environment;
}

const WORKSPACES: WorkspaceName[] = ['default', 'other'];
export const TENANTS: TenantName[] = WORKSPACES.flatMap((workspace) =>
  ENVIRONMENTS.map((environment) => ({ workspace, environment })),
);
export const keyOf = ({ workspace, environment }: TenantName) => `${workspace}-${environment}`;

/** A caller of one tenant aiming at the objects of another. */
export interface Pair {
  victim: TenantName;
  caller: TenantName;
  /** The caller's workspace is the victim's (so its environment is the other one). */
  sameWorkspace: boolean;
}

export const PAIRS: Pair[] = TENANTS.flatMap((victim) =>
  TENANTS.filter((caller) => caller !== victim).map((caller) => ({
    victim,
    caller,
    sameWorkspace: caller.workspace === victim.workspace,
  })),
);

/** Test titles name the two tenants of a pair. */
export const titled = <T extends { pair: Pair }>(cases: T[]) =>
  cases.map((c) => [keyOf(c.pair.victim), keyOf(c.pair.caller), c] as const);

export interface DataSourceRef {
  id: number;
  providedId: string;
}

/** One tenant's objects, made once per file: what its callers act with, and what the other tenants aim at. */
export interface TenantObjects extends TenantName {
  key: string;
  tenant: Tenant;
  tokens: Record<Scope, string>;
  /** The workspace's schema; both workspaces name theirs alike. */
  schemaId: number;
  /** A group with properties, mapped to `mapped`. */
  group: UserGroup;
  mapped: DataSourceRef;
  /** A data source no group maps to: only isolation keeps it from being changed or deleted. */
  spare: DataSourceRef;
  /** A read API token nobody uses: only isolation keeps it from being revoked. */
  apiTokenId: number;
  /** Groups whose ids the other tenants' callers take for groups of their own, one per caller scope. */
  namesakes: Record<Scope, UserGroup>;
}

/** What an operation names: the victim's objects, or objects of the same kinds that exist nowhere. */
export interface Target {
  environment: Environment;
  groupId: string;
  groupName: string;
  groupToken: string;
  teamId: number;
  mappedDataSourceProvidedId: string;
  dataSourceId: number;
  dataSourceProvidedId: string;
  apiTokenId: number;
  schemaId: number;
}

export const targetOf = (victim: TenantObjects): Target => ({
  environment: victim.environment,
  groupId: victim.group.provided_id,
  groupName: victim.group.name,
  groupToken: victim.group.token,
  teamId: victim.group.team_id,
  mappedDataSourceProvidedId: victim.mapped.providedId,
  dataSourceId: victim.spare.id,
  dataSourceProvidedId: victim.spare.providedId,
  apiTokenId: victim.apiTokenId,
  schemaId: victim.schemaId,
});

/** Objects of every kind that exist nowhere, in the victim's environment: the baseline of every answer. */
export const absentTarget = (environment: Environment): Target => ({
  environment,
  groupId: `absent-${randomUUID()}`,
  groupName: `Absent ${randomUUID()}`,
  groupToken: unusedUserGroupToken(),
  teamId: 900_000_001,
  mappedDataSourceProvidedId: `absent-${randomUUID()}`,
  dataSourceId: 900_000_002,
  dataSourceProvidedId: `absent-${randomUUID()}`,
  apiTokenId: 900_000_003,
  schemaId: 900_000_004,
});

/** What a caller gets for an object that exists nowhere: an error, or, from a filter, an empty list. */
export type Outcome = { status: number; code: string } | { status: 200; emptyList: string };

export const fails = (status: number, code: string): Outcome => ({ status, code });
export const emptyList = (list: string): Outcome => ({ status: 200, emptyList: list });
/** `outcome` for a caller whose scope includes `needed`; 403 insufficient_scope for any other. */
export const needs =
  (needed: Scope, outcome: Outcome) =>
  (scope: Scope): Outcome =>
    scopeIncludes(scope, needed) ? outcome : fails(403, 'insufficient_scope');

export interface Operation {
  name: string;
  /** The request, naming `target`; `caller` holds the caller tenant's own objects. */
  request(target: Target, caller: TenantObjects): Omit<ApiRequest, 'token'>;
  /** The answer when the target exists nowhere, by the caller's scope. */
  absent(scope: Scope): Outcome;
  /** Where the docs let the caller reach the victim's object: the answer is then not the absent one. */
  reaches?(pair: Pair, scope: Scope): boolean;
}

/**
 * docs/api.md#the-admin-api: an admin call acts in the environment it names (default: the
 * API token's), audit events span the workspace, and a token of either environment can revoke any
 * token of its workspace; schemas belong to the workspace. Nothing crosses a workspace.
 */
export const sameWorkspaceAdmin = (pair: Pair, scope: Scope) => pair.sameWorkspace && scope === 'admin';

const VOLATILE_HEADERS = new Set(['date', 'x-request-id', 'content-length']);

/**
 * What a response tells its caller: status, headers with their values (WWW-Authenticate, Allow,
 * Retry-After… but those that differ on any two responses), and the body but its request id, with
 * every value of `target` it echoes (a message may name the id asked for) replaced by a placeholder,
 * so that an answer about the victim's object and one about an absent object compare alike.
 */
export function answer(response: ApiResponse, target: Target) {
  const headers = Object.fromEntries(
    Object.entries(response.headers)
      .filter(([name]) => !VOLATILE_HEADERS.has(name))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  const echoes = Object.entries(target).filter(([field]) => field !== 'environment');
  const withoutEchoes = (text: string) => {
    // Strings first: the digits inside a token or an id must not be taken for a numeric id.
    for (const [field, value] of echoes) if (typeof value === 'string') text = text.replaceAll(value, `<${field}>`);
    // Numeric ids of different kinds may coincide (team 1, schema 1): any of them reads as one id.
    for (const [, value] of echoes)
      if (typeof value === 'number') text = text.replace(new RegExp(`(?<![0-9])${value}(?![0-9])`, 'g'), '<id>');
    return text;
  };
  const body: unknown = JSON.parse(JSON.stringify(observable(response).body ?? null), (_key, value) =>
    typeof value === 'string' ? withoutEchoes(value) : value,
  );
  return { status: response.status, headers, body };
}

export function expectOutcome(response: ApiResponse, outcome: Outcome, label: string): void {
  if ('code' in outcome) {
    expect({ status: response.status, code: response.body?.error?.code }, label).toEqual(outcome);
    expect(response.body, label).toMatchObject({
      success: 0,
      error: { message: expect.any(String), request_id: response.headers['x-request-id'] },
    });
  } else {
    expect({ status: response.status, list: response.body?.[outcome.emptyList] }, label).toEqual({
      status: 200,
      list: [],
    });
  }
}

export type StoredTenantState = Awaited<ReturnType<DatabaseReader['tenantState']>>;

/** The victim's stored state, and its group as the victim's own read token resolves it. */
export interface VictimState {
  stored: StoredTenantState;
  verified: ReturnType<typeof observable>;
}

export interface IsolationFixture {
  call(req: ApiRequest): Promise<ApiResponse>;
  of(tenant: TenantName): TenantObjects;
  victimState(victim: TenantObjects): Promise<VictimState>;
  /** A data source and an API token of the victim's that a test may change, delete or revoke. */
  spendables(victim: TenantObjects): Promise<{ dataSource: DataSourceRef; apiTokenId: number }>;
}

/** A test app whose four tenants each hold the objects of `TenantObjects`, made once for the file. */
export function useIsolationFixture(): IsolationFixture {
  const app = useTestAppWithReader();
  const objects = new Map<string, TenantObjects>();
  const call = (req: ApiRequest) => inject(app.t.app, req);
  const succeed = async (req: ApiRequest) => {
    const response = await call(req);
    expect(response.status, response.raw).toBe(200);
    return response.body;
  };
  /*
   * Schema and data-source ids are numbers of their workspace (docs/api.md#schema-and-data-source-ids): each workspace's first
   * schema and first data source are given an id from a range of its own, and later ones follow it,
   * so that another workspace's id names an object that does not exist in the caller's (as ids unique
   * in the deployment did), never the caller's own namesake.
   */
  const started = new Set<string>();
  const firstIdIn = (workspace: WorkspaceName, kind: 'schema' | 'data source') => {
    if (started.has(`${workspace}/${kind}`)) return {};
    started.add(`${workspace}/${kind}`);
    return { id: (WORKSPACES.indexOf(workspace) + 1) * 10_000 };
  };
  const createDataSource = async (
    tokens: Record<Scope, string>,
    providedId: string,
    schemaId: number,
    workspace: WorkspaceName,
  ): Promise<DataSourceRef> => {
    const { data_source } = await succeed({
      method: 'POST',
      path: '/api/admin/data_sources',
      token: tokens.admin,
      body: { ...firstIdIn(workspace, 'data source'), provided_id: providedId, name: providedId, schema_id: schemaId },
    });
    return { id: data_source.id, providedId };
  };
  const createApiToken = async (tokens: Record<Scope, string>, name: string): Promise<number> =>
    (
      await succeed({
        method: 'POST',
        path: '/api/admin/api_tokens',
        token: tokens.admin,
        body: { name, scope: 'read' },
      })
    ).api_token.id;

  const fixture: IsolationFixture = {
    call,
    of: (tenant) => objects.get(keyOf(tenant))!,
    async victimState(victim) {
      const verified = await call({
        method: 'POST',
        path: '/api/user/verify',
        token: victim.tokens.read,
        body: { token: victim.group.token },
      });
      return { stored: await app.reader.tenantState(victim.tenant), verified: observable(verified) };
    },
    async spendables(victim) {
      const spent = `${victim.key}.spent-${randomUUID()}`;
      return {
        dataSource: await createDataSource(victim.tokens, spent, victim.schemaId, victim.workspace),
        apiTokenId: await createApiToken(victim.tokens, spent),
      };
    },
  };

  beforeAll(async () => {
    const schemas = new Map<WorkspaceName, number>();
    for (const workspace of WORKSPACES) {
      const { schema } = await succeed({
        method: 'POST',
        path: '/api/admin/schemas',
        token: app.t.tokens[workspace].Customer.admin,
        body: { name: 'sales', ...firstIdIn(workspace, 'schema') },
      });
      schemas.set(workspace, schema.id);
    }
    for (const name of TENANTS) {
      const key = keyOf(name);
      const tokens = app.t.tokens[name.workspace][name.environment];
      const schemaId = schemas.get(name.workspace)!;
      const mapped = await createDataSource(tokens, `${key}.mapped`, schemaId, name.workspace);
      const spare = await createDataSource(tokens, `${key}.spare`, schemaId, name.workspace);
      const group = await makeGroup(
        { target: call, token: tokens.write },
        {
          id: `${key}.target`,
          name: `Target of ${key}`,
          properties: { plan: 'gold' },
          mapping: { [schemaId]: mapped.providedId },
        },
      );
      const namesakes = {} as Record<Scope, UserGroup>;
      for (const scope of SCOPES)
        namesakes[scope] = await makeGroup({ target: call, token: tokens.write }, { id: `${key}.namesake-${scope}` });
      const apiTokenId = await createApiToken(tokens, `${key} spare`);
      const tenant = await tenantOf(app.t, name.workspace, name.environment);
      objects.set(key, { ...name, key, tenant, tokens, schemaId, group, mapped, spare, apiTokenId, namesakes });
    }
  });
  return fixture;
}

/** Asks about the victim's objects and about absent ones alike, and expects the same answer. */
export async function expectAnsweredAsAbsent(
  fixture: IsolationFixture,
  operation: Operation,
  victim: TenantObjects,
  caller: TenantObjects,
  scope: Scope,
  target = targetOf(victim),
) {
  const token = caller.tokens[scope];
  const absent = absentTarget(victim.environment);
  // The two touch different objects, so they may run at once.
  const [asked, nowhere] = await Promise.all([
    fixture.call({ ...operation.request(target, caller), token }),
    fixture.call({ ...operation.request(absent, caller), token }),
  ]);
  expect(answer(asked, target), operation.name).toEqual(answer(nowhere, absent));
  expectOutcome(asked, operation.absent(scope), operation.name);
}

/**
 * The matrix over `operations`: for every pair and caller scope, each operation the docs do not let
 * reach the victim answers as for an absent object, and the victim's whole state stays as it was;
 * each one they do let reach it (an admin of the same workspace) succeeds on the victim's object, and
 * changes nothing of the victim's but the objects spent on it.
 */
export function describeIsolationMatrix(fixture: IsolationFixture, operations: Operation[]): void {
  describe.each(titled(PAIRS.map((pair) => ({ pair }))))('a %s victim, a %s caller', (_victim, _caller, { pair }) => {
    for (const scope of SCOPES) {
      const reached = operations.filter((operation) => operation.reaches?.(pair, scope));
      const refused = operations.filter((operation) => !reached.includes(operation));

      it(`with scope ${scope}: the ${refused.length} operations kept within the caller's tenant answer as for absent objects and change nothing`, async () => {
        const victim = fixture.of(pair.victim);
        const caller = fixture.of(pair.caller);
        const before = await fixture.victimState(victim);
        expect(before.verified.status).toBe(200);
        for (const operation of refused) await expectAnsweredAsAbsent(fixture, operation, victim, caller, scope);
        expect(await fixture.victimState(victim)).toEqual(before);
      });

      if (reached.length > 0) {
        it(`with scope ${scope}: reaches the victim's objects where the docs say (${reached.map((operation) => operation.name).join('; ')})`, () =>
          expectReached(fixture, reached, pair, scope));
      }
    }
  });
}

/** A response body with `token` taken out of the group (`user_group`) or groups (`user_groups`) it holds. */
function withoutGroupTokens(body: unknown): unknown {
  const strip = (group: Record<string, unknown>) => {
    const { token: _token, ...rest } = group;
    return rest;
  };
  if (body === null || typeof body !== 'object') return body;
  const { user_group: one, user_groups: many } = body as {
    user_group?: Record<string, unknown>;
    user_groups?: Record<string, unknown>[];
  };
  return {
    ...body,
    ...(one ? { user_group: strip(one) } : {}),
    ...(many ? { user_groups: many.map(strip) } : {}),
  };
}

async function expectReached(fixture: IsolationFixture, reached: Operation[], pair: Pair, scope: Scope) {
  const victim = fixture.of(pair.victim);
  const caller = fixture.of(pair.caller);
  const spent = await fixture.spendables(victim);
  const target = {
    ...targetOf(victim),
    dataSourceId: spent.dataSource.id,
    dataSourceProvidedId: spent.dataSource.providedId,
    apiTokenId: spent.apiTokenId,
  };
  const before = await fixture.victimState(victim);
  for (const operation of reached) {
    const request = operation.request(target, caller);
    const response = await fixture.call({ ...request, token: caller.tokens[scope] });
    expect(response.status, `${operation.name}: ${response.raw}`).toBe(200);
    if (request.method === 'GET') {
      // A read shows the victim's object exactly as it shows it to the victim's own admin, but for
      // its secrets: across environments a group comes without its token (docs/api.md#the-admin-api).
      expect(response.raw, operation.name).toMatch(
        new RegExp(`"(team_id":${target.teamId}|id":${target.dataSourceId})[,}]`),
      );
      const own = observable(await fixture.call({ ...request, token: victim.tokens.admin }));
      expect(observable(response), operation.name).toEqual(
        pair.caller.environment === pair.victim.environment ? own : { ...own, body: withoutGroupTokens(own.body) },
      );
    }
  }
  // Only what was spent may have changed (audit events aside: the changes are recorded).
  const unspent = ({ stored, verified }: VictimState) => ({
    verified,
    userGroups: stored.userGroups,
    // The API's id of a data source is its number (migration 0010).
    dataSources: stored.dataSources.filter((row) => row.number !== spent.dataSource.id),
    apiTokens: stored.apiTokens.filter((row) => row.id !== spent.apiTokenId),
    schemas: stored.schemas,
  });
  expect(unspent(await fixture.victimState(victim))).toEqual(unspent(before));
}
