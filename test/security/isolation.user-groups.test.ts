import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/domain/tenancy.js';
import type { ApiRequest } from '../support/http-client.js';
import {
  describeIsolationMatrix,
  expectAnsweredAsAbsent,
  fails,
  needs,
  PAIRS,
  targetOf,
  TENANTS,
  titled,
  useIsolationFixture,
  type Operation,
  type Target,
  type TenantObjects,
} from './isolation-matrix.js';
import { makeGroup } from '../support/group-maker.js';

const USER = '/api/user';
const writes = (code: string, status = 404) => needs('write', fails(status, code));
const groupNotFound = writes('user_group_not_found');
const unknownDataSource = writes('unknown_data_source', 400);
/** A new id on every call: a create that slipped through would not meet its own earlier result. */
const freshId = () => `created-${randomUUID()}`;

/** Every /api/user request that can name another tenant's group, token, data source or schema. */
const OPERATIONS: Operation[] = [
  {
    name: 'PUT update by user_group_id',
    request: (g) => ({
      method: 'PUT',
      path: USER,
      body: { user_group_id: g.groupId, name: 'taken over', properties: { hijacked: true } },
    }),
    absent: groupNotFound,
  },
  {
    name: 'PUT rename by user_group_id',
    request: (g) => ({ method: 'PUT', path: USER, body: { user_group_id: g.groupId, new_user_group_id: freshId() } }),
    absent: groupNotFound,
  },
  {
    name: 'POST rotate by current_token',
    request: (g) => ({ method: 'POST', path: USER, body: { current_token: g.groupToken } }),
    absent: groupNotFound,
  },
  {
    name: 'DELETE by current_token',
    request: (g) => ({ method: 'DELETE', path: USER, body: { current_token: g.groupToken } }),
    absent: groupNotFound,
  },
  {
    name: 'DELETE by user_group_id',
    request: (g) => ({ method: 'DELETE', path: USER, body: { user_group_id: g.groupId } }),
    absent: groupNotFound,
  },
  {
    name: 'DELETE by current_token and user_group_id',
    request: (g) => ({ method: 'DELETE', path: USER, body: { current_token: g.groupToken, user_group_id: g.groupId } }),
    absent: groupNotFound,
  },
  {
    name: 'DELETE by user_group_id with its data_source_provided_id',
    request: (g) => ({
      method: 'DELETE',
      path: USER,
      body: { user_group_id: g.groupId, data_source_provided_id: g.mappedDataSourceProvidedId },
    }),
    absent: groupNotFound,
  },
  {
    // A 409 user_group_mismatch here would tell that the token exists.
    name: "DELETE the caller's group by user_group_id with the target's current_token",
    request: (g, own) => ({
      method: 'DELETE',
      path: USER,
      body: { current_token: g.groupToken, user_group_id: own.group.provided_id },
    }),
    absent: groupNotFound,
  },
  {
    name: "DELETE the caller's group by current_token with the target's user_group_id",
    request: (g, own) => ({
      method: 'DELETE',
      path: USER,
      body: { current_token: own.group.token, user_group_id: g.groupId },
    }),
    absent: groupNotFound,
  },
  {
    name: "DELETE the caller's group with the target's data_source_provided_id",
    request: (g, own) => ({
      method: 'DELETE',
      path: USER,
      body: { user_group_id: own.group.provided_id, data_source_provided_id: g.mappedDataSourceProvidedId },
    }),
    absent: writes('data_source_mismatch', 409),
  },
  {
    name: 'POST verify',
    request: (g) => ({ method: 'POST', path: `${USER}/verify`, body: { token: g.groupToken } }),
    absent: () => fails(404, 'user_group_not_found'),
  },
  ...mappingOperations(),
];

/** A mapping that names the target's data source (three ways) or is keyed by its workspace's schema, on create and on update. */
function mappingOperations(): Operation[] {
  const references: Array<[string, (g: Target, own: TenantObjects) => Record<string, number | string>]> = [
    ["the target's data source by id", (g, own) => ({ [own.schemaId]: g.dataSourceId })],
    ["the target's data source by id as digits", (g, own) => ({ [own.schemaId]: String(g.dataSourceId) })],
    ["the target's data source by provided_id", (g, own) => ({ [own.schemaId]: g.dataSourceProvidedId })],
  ];
  const asCreate = (mapping: Record<string, number | string>): Omit<ApiRequest, 'token'> => ({
    method: 'GET',
    path: USER,
    body: { user_group_id: freshId(), mapping },
  });
  const asUpdate = (own: TenantObjects, mapping: Record<string, number | string>): Omit<ApiRequest, 'token'> => ({
    method: 'PUT',
    path: USER,
    body: { user_group_id: own.group.provided_id, mapping },
  });
  return [
    ...references.flatMap(([label, mapping]): Operation[] => [
      {
        name: `GET create mapping ${label}`,
        request: (g, own) => asCreate(mapping(g, own)),
        absent: unknownDataSource,
      },
      {
        name: `PUT the caller's group mapping ${label}`,
        request: (g, own) => asUpdate(own, mapping(g, own)),
        absent: unknownDataSource,
      },
    ]),
    // Schemas belong to the workspace: within it the key is the caller's own schema, and the update
    // (to the caller's own data source, as it was) goes through.
    {
      name: "PUT the caller's group mapping keyed by the target's schema",
      request: (g, own) => asUpdate(own, { [g.schemaId]: own.mapped.id }),
      absent: writes('unknown_schema', 400),
      reaches: (pair, scope) => pair.sameWorkspace && scope !== 'read',
    },
  ];
}

const fixture = useIsolationFixture();

describe('isolation of user groups: every tenant against every other, every scope, every /api/user operation', () => {
  describeIsolationMatrix(fixture, OPERATIONS);
});

describe("a caller who takes the id of another tenant's group", () => {
  const getOrCreate: Operation = {
    name: 'GET get-or-create by user_group_id',
    request: (g) => ({ method: 'GET', path: USER, body: { user_group_id: g.groupId, name: 'Namesake' } }),
    absent: () => fails(403, 'insufficient_scope'),
  };
  const renameOnto: Operation = {
    name: "PUT rename the caller's group onto the user_group_id",
    request: (g, own) => ({
      method: 'PUT',
      path: USER,
      body: { user_group_id: own.group.provided_id, new_user_group_id: g.groupId },
    }),
    absent: () => fails(403, 'insufficient_scope'),
  };

  describe.each(titled(PAIRS.map((pair) => ({ pair }))))('a %s victim, a %s caller', (_victim, _caller, { pair }) => {
    it.each(SCOPES)(
      "with scope %s: gets a group of its own tenant, never the victim's, and changes nothing of the victim's",
      async (scope) => {
        const { call } = fixture;
        const victim = fixture.of(pair.victim);
        const caller = fixture.of(pair.caller);
        const namesake = victim.namesakes[scope];
        const target = {
          ...targetOf(victim),
          groupId: namesake.provided_id,
          groupToken: namesake.token,
          teamId: namesake.team_id,
        };
        const token = caller.tokens[scope];
        const before = await fixture.victimState(victim);

        if (scope === 'read') {
          // Read cannot create, and its refusal does not tell that the id exists elsewhere.
          await expectAnsweredAsAbsent(fixture, getOrCreate, victim, caller, scope, target);
          await expectAnsweredAsAbsent(fixture, renameOnto, victim, caller, scope, target);
        } else {
          // Ids are unique per tenant: renaming a group of the caller's own onto it is no conflict.
          const own = await makeGroup({ target: call, token: token }, { id: freshId() });
          const renamed = await call({
            method: 'PUT',
            path: USER,
            token,
            body: { user_group_id: own.provided_id, new_user_group_id: namesake.provided_id },
          });
          expect(renamed.body, renamed.raw).toMatchObject({
            success: 1,
            user_group: { team_id: own.team_id, provided_id: namesake.provided_id },
          });
          expect(
            (await call({ method: 'DELETE', path: USER, token, body: { user_group_id: namesake.provided_id } })).body,
          ).toEqual({ success: 1 });

          const created = await call({
            method: 'GET',
            path: USER,
            token,
            body: { user_group_id: namesake.provided_id, name: 'Namesake' },
          });
          expect(created.body, created.raw).toMatchObject({
            success: 1,
            new_user_group: true,
            user_group: {
              provided_id: namesake.provided_id,
              name: 'Namesake',
              api_environment_tag: caller.environment,
              properties: null,
              mapping: {},
            },
          });
          const twin = created.body.user_group;
          expect(twin.team_id).not.toBe(namesake.team_id);
          expect(twin.token).not.toBe(namesake.token);

          // Each token opens its own group only, in its own tenant.
          const verify = (apiToken: string, groupToken: string) =>
            call({ method: 'POST', path: `${USER}/verify`, token: apiToken, body: { token: groupToken } });
          expect((await verify(caller.tokens.read, twin.token)).body.user_group).toEqual(twin);
          expect((await verify(victim.tokens.read, twin.token)).status).toBe(404);
          expect((await verify(caller.tokens.read, namesake.token)).status).toBe(404);

          // Through the shared id, every operation acts on the caller's group.
          const again = await call({ method: 'GET', path: USER, token, body: { user_group_id: namesake.provided_id } });
          expect(again.body).toMatchObject({ new_user_group: false, user_group: twin });
          const updated = await call({
            method: 'PUT',
            path: USER,
            token,
            body: { user_group_id: namesake.provided_id, name: 'Renamed namesake' },
          });
          expect(updated.body.user_group).toMatchObject({ team_id: twin.team_id, name: 'Renamed namesake' });
          const rotated = await call({ method: 'POST', path: USER, token, body: { current_token: twin.token } });
          expect(rotated.body.user_group).toMatchObject({ team_id: twin.team_id, provided_id: namesake.provided_id });
          expect(
            (await call({ method: 'DELETE', path: USER, token, body: { user_group_id: namesake.provided_id } })).body,
          ).toEqual({ success: 1 });
        }

        expect(await fixture.victimState(victim)).toEqual(before);
        expect(
          (
            await fixture.call({
              method: 'POST',
              path: `${USER}/verify`,
              token: victim.tokens.read,
              body: { token: namesake.token },
            })
          ).body.user_group,
        ).toEqual(namesake);
      },
    );
  });
});

it("resolves a mapping's data source provided_id inside the caller's own tenant, where all four tenants have one of that name", async () => {
  const warehouses = new Map<string, number>();
  for (const tenant of TENANTS) {
    const own = fixture.of(tenant);
    const response = await fixture.call({
      method: 'POST',
      path: '/api/admin/data_sources',
      token: own.tokens.admin,
      body: { provided_id: 'warehouse', name: 'warehouse', schema_id: own.schemaId },
    });
    warehouses.set(own.key, response.body.data_source.id);
  }
  for (const tenant of TENANTS) {
    const own = fixture.of(tenant);
    const group = await makeGroup(
      { target: fixture.call, token: own.tokens.write },
      {
        id: 'maps-warehouse',
        mapping: { [own.schemaId]: 'warehouse' },
      },
    );
    expect(group.mapping, own.key).toEqual({ [own.schemaId]: String(warehouses.get(own.key)) });
  }
});
