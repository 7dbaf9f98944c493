import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tenant } from '../../src/domain/tenancy.js';
import { openDatabaseReader } from '../support/database-reader.js';
import { send, type ApiResponse } from '../support/http-client.js';
import { startServeProcess, type ServeProcess } from '../support/serve-process.js';
import type { TestApp } from '../support/test-app.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../support/test-database.js';
import { DatabaseReader, useTestAppWithReader } from '../security/helpers.js';
import { expectError } from '../support/error-envelope.js';
import { getOrCreate } from '../support/user-group-api.js';
import { makeGroup } from '../support/group-maker.js';

const raceFor = (baseUrl: string, token: string, id: string) =>
  getOrCreate({ baseUrl }, token, { user_group_id: id, name: `Race ${id}` });

/** Every caller of a get-or-create race got the same one group, and exactly one of them created it. */
function expectOneGroupForAll(responses: ApiResponse[]): void {
  expect(responses.map((response) => response.status)).toEqual(responses.map(() => 200));
  expect(new Set(responses.map((response) => response.body.user_group.team_id)).size).toBe(1);
  expect(new Set(responses.map((response) => response.body.user_group.token)).size).toBe(1);
  expect(responses.filter((response) => response.body.new_user_group === true)).toHaveLength(1);
}

async function expectStoredOnce(reader: DatabaseReader, tenant: Tenant, id: string): Promise<void> {
  expect(await reader.countGroups(tenant, id)).toBe(1);
  expect(await reader.countAuditEvents(tenant, 'user_group.created', id)).toBe(1);
}

describe('concurrent requests in one process, over a real socket', () => {
  let t: TestApp;
  let baseUrl: string;
  let reader: DatabaseReader;
  let tenant: Tenant;

  const fixture = useTestAppWithReader();

  beforeAll(async () => {
    ({ t, reader, tenant } = fixture);
    baseUrl = await t.listen();
  });

  it('creates exactly one group from 100 concurrent get-or-create calls for a new id', async () => {
    const write = t.tokens.default.Customer.write;
    const responses = await Promise.all(Array.from({ length: 100 }, () => raceFor(baseUrl, write, 'race-one-process')));
    expectOneGroupForAll(responses);
    await expectStoredOnce(reader, tenant, 'race-one-process');
  });

  it('lets exactly one of 20 concurrent rotations with the same current token win', async () => {
    const write = t.tokens.default.Customer.write;
    const group = await makeGroup({ target: (req) => send(baseUrl, req), token: write }, { id: 'rotation-race' });
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        send(baseUrl, { method: 'POST', path: '/api/user', token: write, body: { current_token: group.token } }),
      ),
    );
    const winners = responses.filter((response) => response.status === 200);
    expect(winners).toHaveLength(1);
    const losers = responses.filter((response) => response.status !== 200);
    expect(losers).toHaveLength(19);
    losers.forEach((response) => expectError(response, 404, 'user_group_not_found'));
    expect(await reader.countAuditEvents(tenant, 'user_group.token_rotated', 'rotation-race')).toBe(1);

    const newToken = winners[0]!.body.user_group.token as string;
    expect(newToken).not.toBe(group.token);
    const verify = (token: string) =>
      send(baseUrl, {
        method: 'POST',
        path: '/api/user/verify',
        token: t.tokens.default.Customer.read,
        body: { token },
      });
    const verified = await verify(newToken);
    expect(verified.status).toBe(200);
    expect(verified.body.user_group.team_id).toBe(group.team_id);
    expectError(await verify(group.token), 404, 'user_group_not_found');
  });
});

const SHARED_DATABASE = TEST_ENGINE === 'sqlite' ? 'one SQLite file' : 'one PostgreSQL database';

describe(`concurrent get-or-create across two \`ugs serve\` processes on ${SHARED_DATABASE}`, () => {
  let db: TestDatabase;
  const servers: ServeProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase(TEST_ENGINE);
    // The first start creates the database and prints the admin tokens; the second joins it.
    servers.push(await startServeProcess(db));
    servers.push(await startServeProcess(db));
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await db?.drop();
  });

  it('creates exactly one group from 50 concurrent calls at each process', async () => {
    const [first, second] = servers as [ServeProcess, ServeProcess];
    const admin = first.adminTokens().Customer;
    const calls = Array.from({ length: 50 }, () => [
      raceFor(first.baseUrl, admin, 'race-two-processes'),
      raceFor(second.baseUrl, admin, 'race-two-processes'),
    ]);
    const responses = await Promise.all(calls.flat());
    expectOneGroupForAll(responses);

    const reader = await DatabaseReader.open(db);
    try {
      const workspace = await reader.workspaceId('default');
      await expectStoredOnce(reader, { workspaceId: workspace, environment: 'Customer' }, 'race-two-processes');
    } finally {
      await reader.close();
    }
  });

  it("never stores a mapping that contradicts its data source's schema: a PUT mapping it races a PATCH moving it to another schema, 60 times", async () => {
    const [first, second] = servers as [ServeProcess, ServeProcess];
    const admin = first.adminTokens().Customer;
    const post = (path: string, body: unknown) => send(first.baseUrl, { method: 'POST', path, token: admin, body });
    const [schemaA, schemaB] = await Promise.all([
      post('/api/admin/schemas', { name: 'race-a' }),
      post('/api/admin/schemas', { name: 'race-b' }),
    ]);
    const [a, b] = [schemaA.body.schema.id as number, schemaB.body.schema.id as number];
    const outcomes = new Map<string, number>();
    for (let round = 0; round < 60; round += 1) {
      const dataSource = (
        await post('/api/admin/data_sources', { provided_id: `race-ds-${round}`, name: 'Racing', schema_id: a })
      ).body.data_source;
      await raceFor(first.baseUrl, admin, `race-map-${round}`);
      // Each request on its own process, which of them goes first alternating.
      const [mapServer, patchServer] = round % 2 === 0 ? [first, second] : [second, first];
      const [mapped, moved] = await Promise.all([
        send(mapServer.baseUrl, {
          method: 'PUT',
          path: '/api/user',
          token: admin,
          body: { user_group_id: `race-map-${round}`, mapping: { [a]: dataSource.id } },
        }),
        send(patchServer.baseUrl, {
          method: 'PATCH',
          path: `/api/admin/data_sources/${dataSource.id}`,
          token: admin,
          body: { schema_id: b },
        }),
      ]);
      const outcome = `${mapped.status} ${mapped.body.error?.code ?? ''} / ${moved.status} ${moved.body.error?.code ?? ''}`;
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      // Exactly one wins, and the other is refused for that very reason.
      expect(['200  / 409 data_source_in_use', '400 data_source_schema_mismatch / 200 '], outcome).toContain(outcome);
    }
    const reader = await openDatabaseReader(db);
    try {
      const contradictions = await reader.count(
        'user_group_mappings m JOIN data_sources d ON d.id = m.data_source_id WHERE d.schema_id <> m.schema_id',
      );
      expect(contradictions, JSON.stringify(Object.fromEntries(outcomes))).toBe(0);
    } finally {
      await reader.close();
    }
  });
});
