// `ugs serve` whose PostgreSQL connection runs through a TCP proxy the test controls: the database
// goes away mid-run (connections reset, or a black hole that swallows every byte) and comes back.
// While it is away every API call is a prompt 503 `unavailable` with Retry-After and /readyz fails,
// while the process stays up; once it is back the same process serves again, without a restart.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApiResponse } from '../support/http-client.js';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { createTestDatabase, viaPort, type TestDatabase } from '../support/test-database.js';
import { expectUnavailable, isUgsProcessAlive, waitFor } from './helpers.js';
import { expectError } from '../support/error-envelope.js';
import { uniqueId } from '../support/unique-id.js';
import { call } from '../support/http-client.js';
import { getOrCreate, verify } from '../support/user-group-api.js';
import { makeGroup, type UserGroup } from '../support/group-maker.js';

/** Bounds the wait for the service to serve again once the database is back. */
const RECOVERY_TIMEOUT_MS = 20_000;

let db: TestDatabase;
let proxy: TcpProxy;
let server: ServeProcess;
let admin: string;
/** A group created while the database was reachable. */
let known: UserGroup;

beforeAll(async () => {
  db = await createTestDatabase('postgres');
  const direct = new URL(db.url);
  proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
  // Everything, the migrations included, goes through the proxy.
  server = await startServeProcess({ ...db, url: viaPort(db.url, proxy.port) });
  admin = server.adminTokens().Customer;
});

// A test that failed half-way must not leave the next one without its database.
afterEach(() => proxy?.restore());

afterAll(async () => {
  await stopAllServeProcesses();
  await proxy?.close();
  await db?.drop();
});

type Outcome = { kind: 'response'; response: ApiResponse } | { kind: 'error'; error: Error };

/** A mix of what clients do: read a group, verify its token, create a group (a transaction). */
function oneCall(round: number): Promise<ApiResponse> {
  switch (round % 3) {
    case 0:
      return getOrCreate(server, admin, { user_group_id: known.provided_id });
    case 1:
      return verify(server, admin, known.token);
    default:
      return getOrCreate(server, admin, { user_group_id: uniqueId('stream') });
  }
}

const settle = (request: Promise<ApiResponse>): Promise<Outcome> =>
  request.then(
    (response) => ({ kind: 'response', response }),
    (error: Error) => ({ kind: 'error', error }),
  );

/** Fails on a hung request or a socket error, and on any status but the allowed ones; the responses otherwise. */
function responsesOf(outcomes: Outcome[], allowed: number[]): ApiResponse[] {
  const errors = outcomes.flatMap((outcome) => (outcome.kind === 'error' ? [outcome.error.message] : []));
  expect(errors).toEqual([]);
  const responses = outcomes.flatMap((outcome) => (outcome.kind === 'response' ? [outcome.response] : []));
  for (const response of responses) expect(allowed, `${response.status} ${response.raw}`).toContain(response.status);
  return responses;
}

/** While the database is away: the process is up and says so, but not ready. */
async function expectUpButNotReady(): Promise<void> {
  const health = await call(server, { method: 'GET', path: '/healthz' });
  expect(health.status, health.raw).toBe(200);
  expectUnavailable(await call(server, { method: 'GET', path: '/readyz' }));
  expect(isUgsProcessAlive(server.pid)).toBe(true);
}

/**
 * After `proxy.restore()`: polls until an API call succeeds (each answer meanwhile must be 200 or
 * 503 `unavailable`), then checks that the same process is fully back: ready, creating, verifying,
 * rotating, and still holding what it held before.
 */
async function expectRecovery(): Promise<void> {
  await waitFor('an API call to succeed once the database is back', RECOVERY_TIMEOUT_MS, async () => {
    const response = await verify(server, admin, known.token);
    if (response.status === 200) return response;
    expectUnavailable(response);
    return undefined;
  });

  const ready = await call(server, { method: 'GET', path: '/readyz' });
  expect(ready.status, ready.raw).toBe(200);
  const again = await getOrCreate(server, admin, { user_group_id: known.provided_id });
  expect(again.status, again.raw).toBe(200);
  expect(again.body).toMatchObject({
    new_user_group: false,
    user_group: { team_id: known.team_id, token: known.token },
  });

  const fresh = await makeGroup({ target: server, token: admin }, { id: uniqueId('after_outage') });
  const verified = await verify(server, admin, fresh.token);
  expect(verified.status, verified.raw).toBe(200);
  expect(verified.body.user_group.team_id).toBe(fresh.team_id);
  const rotated = await call(server, {
    method: 'POST',
    path: '/api/user',
    token: admin,
    body: { current_token: fresh.token },
  });
  expect(rotated.status, rotated.raw).toBe(200);
  expect((await verify(server, admin, rotated.body.user_group.token as string)).status).toBe(200);
  expectError(await verify(server, admin, fresh.token), 404, 'user_group_not_found');
}

describe('ugs serve when its PostgreSQL connection fails', () => {
  it('serves normally while the connection is healthy', async () => {
    known = await makeGroup({ target: server, token: admin }, { id: uniqueId('known') });
    expect((await verify(server, admin, known.token)).status).toBe(200);
    const ready = await call(server, { method: 'GET', path: '/readyz' });
    expect(ready.status, ready.raw).toBe(200);
    expect(ready.body).toEqual({ status: 'ok' });
  });

  it('connection cut mid-run: every API call during the outage is a 503 with Retry-After, then it recovers by itself', async () => {
    const LANES = 4;
    const before: Outcome[] = [];
    const during: Outcome[] = [];
    let cut = false;
    let stopping = false;
    const duringPerLane = Array.from({ length: LANES }, () => 0);

    // A steady stream of calls on four lanes; each call is filed by whether it began before the cut.
    const stream = Array.from({ length: LANES }, async (_, lane) => {
      for (let round = lane; !stopping; round++) {
        const startedDuringOutage = cut;
        const outcome = await settle(oneCall(round));
        (startedDuringOutage ? during : before).push(outcome);
        if (startedDuringOutage) duringPerLane[lane]! += 1;
      }
    });

    try {
      await waitFor('calls to succeed before the cut', 20_000, () =>
        before.filter((outcome) => outcome.kind === 'response' && outcome.response.status === 200).length >= 12
          ? true
          : undefined,
      );
      proxy.cut();
      cut = true;
      await waitFor('every lane to make three calls during the outage', 60_000, () =>
        duringPerLane.every((count) => count >= 3) ? true : undefined,
      );
      await expectUpButNotReady();
    } finally {
      stopping = true;
      await Promise.all(stream);
    }

    // A call already running at the cut may have finished either way; none may fail otherwise.
    responsesOf(before, [200, 503])
      .filter((response) => response.status === 503)
      .forEach(expectUnavailable);
    const outage = responsesOf(during, [503]);
    expect(outage.length).toBeGreaterThanOrEqual(LANES * 3);
    outage.forEach(expectUnavailable);

    proxy.restore();
    await expectRecovery();
  }, 120_000);

  it('black hole (the connection stays open but nothing comes back): 503 within the query timeout, not a hang; then it recovers', async () => {
    expect((await verify(server, admin, known.token)).status).toBe(200); // pooled connections exist
    proxy.pause();

    // Idle pooled connections swallow the query (statement timeout); new ones never finish their
    // start-up (connection timeout); both must end in a 503 well before the client gives up.
    const outcomes = await Promise.all(Array.from({ length: 6 }, (_, round) => settle(oneCall(round))));
    responsesOf(outcomes, [503]).forEach(expectUnavailable);
    await expectUpButNotReady();

    proxy.restore();
    await expectRecovery();
  }, 120_000);

  it('the process never went down: it stops cleanly on SIGTERM', async () => {
    expect(server.stderr()).not.toMatch(/uncaught|unhandled/i);
    expect(await server.stop()).toBe(0);
  });
});
