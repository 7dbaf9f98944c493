import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENTS, type Environment } from '../../src/domain/tenancy.js';
import type { ApiRequest } from '../support/http-client.js';
import { withQuery, type Query } from '../support/paged-list.js';
import {
  describeIsolationMatrix,
  emptyList,
  fails,
  needs,
  PAIRS,
  sameWorkspaceAdmin,
  titled,
  useIsolationFixture,
  type Operation,
  type Outcome,
  type Pair,
  type StoredTenantState,
  type Target,
} from './isolation-matrix.js';

const ADMIN = '/api/admin';
const admin = (outcome: Outcome) => needs('admin', outcome);

/**
 * An admin request in two forms: in the API token's environment, and naming the target's; the second
 * reaches the target from the other environment of its workspace (docs/api.md#the-admin-api).
 */
function inBothForms(
  name: string,
  request: (g: Target, query: Query) => Omit<ApiRequest, 'token'>,
  absent: Operation['absent'],
): Operation[] {
  return [
    { name, request: (g) => request(g, {}), absent },
    {
      name: `${name} ?environment=<target's>`,
      request: (g) => request(g, { environment: g.environment }),
      absent,
      reaches: sameWorkspaceAdmin,
    },
  ];
}

const auditOf = (g: Target, query: Query): Omit<ApiRequest, 'token'> => ({
  method: 'GET',
  path: withQuery(`${ADMIN}/audit_events`, { team_id: g.teamId, limit: 1000, ...query }),
});

/** Every admin request that takes the id of another tenant's object, or filters by one. */
const OPERATIONS: Operation[] = [
  ...inBothForms(
    'GET user_groups/{team_id}',
    (g, query) => ({ method: 'GET', path: withQuery(`${ADMIN}/user_groups/${g.teamId}`, query) }),
    admin(fails(404, 'user_group_not_found')),
  ),
  ...inBothForms(
    "GET user_groups?q=<a prefix of the target's user_group_id>",
    (g, query) => ({ method: 'GET', path: withQuery(`${ADMIN}/user_groups`, { q: g.groupId.slice(0, -2), ...query }) }),
    admin(emptyList('user_groups')),
  ),
  ...inBothForms(
    "GET user_groups?q=<a part of the target's name>",
    (g, query) => ({
      method: 'GET',
      path: withQuery(`${ADMIN}/user_groups`, { q: g.groupName.slice(2).toUpperCase(), ...query }),
    }),
    admin(emptyList('user_groups')),
  ),
  ...inBothForms(
    'GET data_sources/{id}',
    (g, query) => ({ method: 'GET', path: withQuery(`${ADMIN}/data_sources/${g.dataSourceId}`, query) }),
    admin(fails(404, 'data_source_not_found')),
  ),
  ...inBothForms(
    'PATCH data_sources/{id}',
    (g, query) => ({
      method: 'PATCH',
      path: withQuery(`${ADMIN}/data_sources/${g.dataSourceId}`, query),
      body: { name: 'taken over', provided_id: `taken-${randomUUID()}` },
    }),
    admin(fails(404, 'data_source_not_found')),
  ),
  ...inBothForms(
    'DELETE data_sources/{id}',
    (g, query) => ({ method: 'DELETE', path: withQuery(`${ADMIN}/data_sources/${g.dataSourceId}`, query) }),
    admin(fails(404, 'data_source_not_found')),
  ),
  // API tokens are the workspace's: an admin of either environment changes or revokes any of them.
  {
    name: 'PATCH api_tokens/{id}',
    request: (g) => ({
      method: 'PATCH',
      path: `${ADMIN}/api_tokens/${g.apiTokenId}`,
      body: { rate_limit: { per_second: 1, burst: 1 } },
    }),
    absent: admin(fails(404, 'api_token_not_found')),
    reaches: sameWorkspaceAdmin,
  },
  {
    name: 'DELETE api_tokens/{id}',
    request: (g) => ({ method: 'DELETE', path: `${ADMIN}/api_tokens/${g.apiTokenId}` }),
    absent: admin(fails(404, 'api_token_not_found')),
    reaches: sameWorkspaceAdmin,
  },
  // Audit events span the workspace unless an environment is named.
  {
    name: 'GET audit_events?team_id=',
    request: (g) => auditOf(g, {}),
    absent: admin(emptyList('audit_events')),
    reaches: sameWorkspaceAdmin,
  },
  {
    name: "GET audit_events?team_id=&environment=<target's>",
    request: (g) => auditOf(g, { environment: g.environment }),
    absent: admin(emptyList('audit_events')),
    reaches: sameWorkspaceAdmin,
  },
  {
    name: "GET audit_events?team_id=&environment=<caller's>",
    request: (g, own) => auditOf(g, { environment: own.environment }),
    absent: admin(emptyList('audit_events')),
  },
  // Schemas are the workspace's too.
  {
    name: "POST data_sources with the target's schema_id",
    request: (g) => ({
      method: 'POST',
      path: `${ADMIN}/data_sources`,
      body: { provided_id: `created-${randomUUID()}`, name: 'created', schema_id: g.schemaId },
    }),
    absent: admin(fails(400, 'unknown_schema')),
    reaches: sameWorkspaceAdmin,
  },
  {
    name: "PATCH the caller's data source to the target's schema_id",
    request: (g, own) => ({
      method: 'PATCH',
      path: `${ADMIN}/data_sources/${own.spare.id}`,
      body: { schema_id: g.schemaId },
    }),
    absent: admin(fails(400, 'unknown_schema')),
    reaches: sameWorkspaceAdmin,
  },
];

const fixture = useIsolationFixture();

describe('isolation of the admin API: every tenant against every other, every scope, every request naming an id', () => {
  describeIsolationMatrix(fixture, OPERATIONS);
});

interface Listing {
  path: string;
  query: Query;
  list: string;
  /** The field that identifies a listed object. */
  key: 'id' | 'team_id';
  /** The victim's objects a listing may show, from its stored state. */
  ids(stored: StoredTenantState, victim: Environment): unknown[];
  /** Whether the caller's listing shows them, with `environment` named or not (docs/api.md#the-admin-api). */
  shows(pair: Pair, environment: Environment | undefined): boolean;
  takesEnvironment: boolean;
}

const namesTheVictims = (pair: Pair, environment: Environment | undefined) =>
  pair.sameWorkspace && environment === pair.victim.environment;
const LISTINGS: Listing[] = [
  {
    path: `${ADMIN}/user_groups`,
    query: { limit: 1000 },
    list: 'user_groups',
    key: 'team_id',
    ids: (s) => s.userGroups.map((row) => row.team_id),
    shows: namesTheVictims,
    takesEnvironment: true,
  },
  {
    path: `${ADMIN}/data_sources`,
    query: {},
    list: 'data_sources',
    key: 'id',
    // The API's id of a data source and of a schema is its number in the workspace (migration 0010).
    ids: (s) => s.dataSources.map((row) => row.number),
    shows: namesTheVictims,
    takesEnvironment: true,
  },
  {
    path: `${ADMIN}/api_tokens`,
    query: {},
    list: 'api_tokens',
    key: 'id',
    ids: (s) => s.apiTokens.filter((row) => row.revoked_at === null).map((row) => row.id),
    shows: namesTheVictims,
    takesEnvironment: true,
  },
  {
    path: `${ADMIN}/audit_events`,
    query: { limit: 1000 },
    list: 'audit_events',
    key: 'id',
    ids: (s, victim) => s.auditEvents.filter((row) => row.environment === victim).map((row) => row.id),
    shows: (pair, environment) =>
      pair.sameWorkspace && (environment === undefined || environment === pair.victim.environment),
    takesEnvironment: true,
  },
  {
    path: `${ADMIN}/schemas`,
    query: {},
    list: 'schemas',
    key: 'id',
    ids: (s) => s.schemas.map((row) => row.number),
    shows: (pair) => pair.sameWorkspace,
    takesEnvironment: false,
  },
];

describe.each(titled(PAIRS.map((pair) => ({ pair }))))(
  'admin listings: a %s victim, a %s admin',
  (_victim, _caller, { pair }) => {
    it("show the victim's objects only where the docs say: never from another workspace", async () => {
      const victim = fixture.of(pair.victim);
      const caller = fixture.of(pair.caller);
      const { stored } = await fixture.victimState(victim);
      for (const listing of LISTINGS) {
        const victimIds = listing.ids(stored, victim.environment);
        expect(victimIds.length, listing.list).toBeGreaterThan(0);
        for (const environment of listing.takesEnvironment ? [undefined, ...ENVIRONMENTS] : [undefined]) {
          const path = withQuery(
            listing.path,
            environment === undefined ? listing.query : { ...listing.query, environment },
          );
          const response = await fixture.call({ method: 'GET', path, token: caller.tokens.admin });
          const label = `${path} (shown: ${listing.shows(pair, environment)})`;
          expect(response.status, label).toBe(200);
          expect(response.body.next_cursor ?? null, label).toBeNull();
          const listed = new Set(response.body[listing.list].map((item: Record<string, unknown>) => item[listing.key]));
          const shown = victimIds.filter((id) => listed.has(id));
          expect(shown, label).toEqual(listing.shows(pair, environment) ? victimIds : []);
        }
      }
    });

    it("create and re-id a data source of their own under the victim's provided_ids: ids are unique per tenant", async () => {
      const victim = fixture.of(pair.victim);
      const caller = fixture.of(pair.caller);
      const token = caller.tokens.admin;
      const before = await fixture.victimState(victim);
      const created = await fixture.call({
        method: 'POST',
        path: `${ADMIN}/data_sources`,
        token,
        body: { provided_id: victim.spare.providedId, name: 'namesake', schema_id: caller.schemaId },
      });
      expect(created.body, created.raw).toMatchObject({
        success: 1,
        data_source: { provided_id: victim.spare.providedId, api_environment_tag: caller.environment },
      });
      const id = created.body.data_source.id;
      expect(id).not.toBe(victim.spare.id);
      const reIded = await fixture.call({
        method: 'PATCH',
        path: `${ADMIN}/data_sources/${id}`,
        token,
        body: { provided_id: victim.mapped.providedId },
      });
      expect(reIded.body.data_source).toMatchObject({ id, provided_id: victim.mapped.providedId });
      expect(
        (await fixture.call({ method: 'DELETE', path: `${ADMIN}/data_sources/${id}`, token })).body.data_source,
      ).toMatchObject({ id });
      expect(await fixture.victimState(victim)).toEqual(before);
    });
  },
);
