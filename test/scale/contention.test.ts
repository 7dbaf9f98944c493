// Concurrency never surfaces as an error (docs/api.md#wire-conventions): 64 concurrent writes of mixed kinds to one group,
// on PostgreSQL through three `ugs serve` processes and on SQLite through one `serve --workers 2`.
// None is answered 503; each is applied or refused for a reason of its own; the audit trail has one
// event per acknowledged change, and replaying the acknowledged writes in audit order gives exactly
// the final state and every response along the way (so some serial order explains them all).
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { ApiRequest, ApiResponse } from '../support/http-client.js';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, type TestDatabase, type TestEngine } from '../support/test-database.js';
import { call } from '../support/http-client.js';
import { makeGroup } from '../support/group-maker.js';

const WRITES = 64;

interface GroupState {
  providedId: string;
  name: string;
  properties: Record<string, unknown> | null;
  token: string;
}

/** A write as sent, with what it does to the group when it is applied. */
interface Write {
  request: ApiRequest;
  apply(state: GroupState, response: ApiResponse): GroupState;
}

interface Cluster {
  db: TestDatabase;
  /** Where the i-th request goes. */
  target(index: number): ServeProcess;
  admin: string;
}

const databases: TestDatabase[] = [];

afterAll(async () => {
  await stopAllServeProcesses();
  for (const db of databases) await db.drop();
});

async function startCluster(engine: TestEngine): Promise<Cluster> {
  const db = await createTestDatabase(engine);
  databases.push(db);
  if (engine === 'sqlite') {
    const server = await startServeProcess(db, { args: ['--workers', '2'] });
    return { db, target: () => server, admin: server.adminTokens().Customer };
  }
  const first = await startServeProcess(db);
  const instances = [first, ...(await Promise.all([startServeProcess(db), startServeProcess(db)]))];
  return { db, target: (index) => instances[index % instances.length]!, admin: first.adminTokens().Customer };
}

/**
 * 40 updates (name and properties, each unique, so none is a no-op), 12 renames back and forth
 * between two ids, 12 rotations of the first token (one can win), shuffled.
 */
function mixedWrites(token: string, ids: [string, string], firstToken: string): Write[] {
  const writes: Write[] = [];
  for (let index = 0; index < 40; index += 1) {
    const name = `name-${index}`;
    const properties = { writer: index };
    writes.push({
      request: { method: 'PUT', path: '/api/user', token, body: { user_group_id: ids[index % 2], name, properties } },
      apply: (state) => ({ ...state, name, properties }),
    });
  }
  for (let index = 0; index < 12; index += 1) {
    const [from, to] = index % 2 === 0 ? ids : [ids[1], ids[0]];
    writes.push({
      request: { method: 'PUT', path: '/api/user', token, body: { user_group_id: from, new_user_group_id: to } },
      apply: (state) => ({ ...state, providedId: to }),
    });
  }
  for (let index = 0; index < 12; index += 1) {
    writes.push({
      request: { method: 'POST', path: '/api/user', token, body: { current_token: firstToken } },
      apply: (state, response) => ({ ...state, token: response.body.user_group.token as string }),
    });
  }
  // A fixed shuffle keeps failures reproducible while the kinds still interleave.
  return writes
    .map((write, index) => ({ write, key: (index * 37) % writes.length }))
    .sort((a, b) => a.key - b.key)
    .map(({ write }) => write);
}

const groupState = (body: Record<string, unknown>, token: string): GroupState => ({
  providedId: body.provided_id as string,
  name: body.name as string,
  properties: body.properties as GroupState['properties'],
  token,
});

describe.each(['postgres', 'sqlite'] as const)('%s: concurrent writes to one group', (engine) => {
  it(`${WRITES} mixed writes are applied one after the other: no 503, one audit event each, the audit order replays to every answer and the final state`, async () => {
    const cluster = await startCluster(engine);
    const suffix = randomBytes(4).toString('hex');
    const ids: [string, string] = [`contended-${suffix}`, `contended-${suffix}-renamed`];
    const created = await makeGroup({ target: cluster.target(0), token: cluster.admin }, { id: ids[0] });
    const initial: GroupState = { providedId: ids[0], name: ids[0], properties: null, token: created.token };

    const writes = mixedWrites(cluster.admin, ids, created.token);
    const requestIds = writes.map((_, index) => `contention-${suffix}-${index}`);
    const responses = await Promise.all(
      writes.map((write, index) =>
        call(cluster.target(index), { ...write.request, headers: { 'x-request-id': requestIds[index]! } }),
      ),
    );

    for (const [index, response] of responses.entries()) {
      const context = `${JSON.stringify(writes[index]!.request.body)} -> ${response.status} ${response.raw}`;
      // Refused only for a reason of its own: the id or the token it names is not (or no longer) there.
      expect([200, 404], context).toContain(response.status);
      if (response.status === 404) expect(response.body.error.code, context).toBe('user_group_not_found');
    }
    const acknowledged = responses.flatMap((response, index) => (response.status === 200 ? [index] : []));
    expect(acknowledged.length).toBeGreaterThan(1);

    const trail = await call(cluster.target(1), {
      method: 'GET',
      path: `/api/admin/audit_events?team_id=${created.team_id}&limit=1000`,
      token: cluster.admin,
    });
    expect(trail.status, trail.raw).toBe(200);
    const events = (trail.body.audit_events as Array<{ id: number; action: string; request_id: string | null }>)
      .filter((event) => event.action !== 'user_group.created')
      .sort((a, b) => a.id - b.id);
    // Exactly one event per acknowledged change, none for a refused one.
    expect(events.map((event) => event.request_id).sort()).toEqual(
      acknowledged.map((index) => requestIds[index]!).sort(),
    );

    // Replaying in audit order explains each answer as the state right after that write…
    let state = initial;
    for (const event of events) {
      const index = requestIds.indexOf(event.request_id!);
      const response = responses[index]!;
      state = writes[index]!.apply(state, response);
      const answered = response.body.user_group as Record<string, unknown>;
      expect(groupState(answered, answered.token as string), `answer of ${event.request_id} (${event.action})`).toEqual(
        state,
      );
    }
    // …and the final state.
    const final = await call(cluster.target(2), {
      method: 'GET',
      path: `/api/admin/user_groups/${created.team_id}`,
      token: cluster.admin,
    });
    expect(final.status, final.raw).toBe(200);
    expect(groupState(final.body.user_group, state.token)).toEqual(state);
    const verified = await call(cluster.target(0), {
      method: 'POST',
      path: '/api/user/verify',
      token: cluster.admin,
      body: { token: state.token },
    });
    expect(verified.status, verified.raw).toBe(200);
    expect(verified.body.user_group).toMatchObject({
      team_id: created.team_id,
      provided_id: state.providedId,
      name: state.name,
    });
  });

  it(`${WRITES} writes racing two deletions: no 503, one deletion wins, nothing is applied after it`, async () => {
    const cluster = await startCluster(engine);
    const id = `doomed-${randomBytes(4).toString('hex')}`;
    const created = await makeGroup({ target: cluster.target(0), token: cluster.admin }, { id: id });
    const requests: ApiRequest[] = Array.from({ length: WRITES }, (_, index): ApiRequest => {
      if (index % 32 === 5)
        return { method: 'DELETE', path: '/api/user', token: cluster.admin, body: { user_group_id: id } };
      if (index % 8 === 3)
        return { method: 'POST', path: '/api/user', token: cluster.admin, body: { current_token: created.token } };
      return {
        method: 'PUT',
        path: '/api/user',
        token: cluster.admin,
        body: { user_group_id: id, properties: { writer: index } },
      };
    });
    const responses = await Promise.all(
      requests.map((request, index) =>
        call(cluster.target(index), { ...request, headers: { 'x-request-id': `doomed-${index}` } }),
      ),
    );
    for (const response of responses) expect([200, 404], response.raw).toContain(response.status);
    const deletions = responses.filter(
      (response, index) => requests[index]!.method === 'DELETE' && response.status === 200,
    );
    expect(deletions).toHaveLength(1);

    const trail = await call(cluster.target(1), {
      method: 'GET',
      path: `/api/admin/audit_events?team_id=${created.team_id}&limit=1000`,
      token: cluster.admin,
    });
    const events = (trail.body.audit_events as Array<{ id: number; action: string; request_id: string }>).sort(
      (a, b) => a.id - b.id,
    );
    expect(events.at(-1)?.action).toBe('user_group.deleted');
    const acknowledged = responses.flatMap((response, index) => (response.status === 200 ? [`doomed-${index}`] : []));
    expect(
      events
        .slice(1)
        .map((event) => event.request_id)
        .sort(),
    ).toEqual(acknowledged.sort());
    const gone = await call(cluster.target(2), {
      method: 'GET',
      path: `/api/admin/user_groups/${created.team_id}`,
      token: cluster.admin,
    });
    expect(gone.status).toBe(404);
  });
});
