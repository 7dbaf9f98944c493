// `ugs serve --workers 2` (node:cluster) on both engines: a primary with two worker processes that
// share the port and the database. On SQLite this also shows several processes on one file are safe.
import { spawn } from 'node:child_process';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldGetOrCreate } from '../support/held-request.js';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, type TestDatabase, type TestEngine } from '../support/test-database.js';
import { childPids, commandLine, isUgsProcessAlive, pidsWithArgument, sleep, waitFor } from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { call } from '../support/http-client.js';
import { getOrCreate } from '../support/user-group-api.js';
import { makeGroup } from '../support/group-maker.js';

const WORKERS = 2;
const UGS_BIN = join(fileURLToPath(new URL('../..', import.meta.url)), 'bin', 'ugs.js');

/** Resolves with the worker pids once the primary has exactly WORKERS live children. */
function workersOf(
  server: ServeProcess,
  what: string,
  accept: (pids: number[]) => boolean = () => true,
): Promise<number[]> {
  return waitFor(what, 20_000, () => {
    const pids = childPids(server.pid);
    return pids.length === WORKERS && accept(pids) ? pids : undefined;
  });
}

/**
 * Whether a TCP connection to the port is refused. A connection that is accepted is closed at once:
 * no request goes over it (during a drain node:cluster may park one in the primary until it exits).
 */
function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

describe.each(['sqlite', 'postgres'] as const)('ugs serve --workers 2 on %s', (engine: TestEngine) => {
  let db: TestDatabase;
  let server: ServeProcess;
  let admin: string;
  /** Every worker pid seen, the replaced one included. */
  const workersSeen = new Set<number>();

  beforeAll(async () => {
    db = await createTestDatabase(engine);
    server = await startServeProcess(db, { args: ['--workers', String(WORKERS)] });
    admin = server.adminTokens().Customer;
  });

  afterAll(async () => {
    await stopAllServeProcesses();
    await db?.drop();
  });

  it('runs as a primary with two worker processes of ugs serve', async () => {
    const workers = await workersOf(server, 'two worker processes');
    for (const pid of workers) {
      workersSeen.add(pid);
      expect(commandLine(pid)).toEqual(
        expect.arrayContaining([expect.stringMatching(/ugs\.js$/), 'serve', '--workers', '2']),
      );
    }
    const health = await call(server, { method: 'GET', path: '/healthz' });
    expect(health.status).toBe(200);
  });

  it('40 concurrent creates of distinct ids all succeed', async () => {
    const ids = Array.from({ length: 40 }, (_, index) => uniqueId(`distinct_${index}`));
    const responses = await Promise.all(ids.map((id) => getOrCreate(server, admin, { user_group_id: id })));
    for (const response of responses) {
      expect(response.status, response.raw).toBe(200);
      expect(response.body.new_user_group).toBe(true);
    }
    expect(responses.map((response) => response.body.user_group.provided_id)).toEqual(ids);
    expect(new Set(responses.map((response) => response.body.user_group.team_id)).size).toBe(40);
    expect(new Set(responses.map((response) => response.body.user_group.token)).size).toBe(40);
  });

  it('40 concurrent get-or-create calls for one new id create exactly one group', async () => {
    const id = uniqueId('shared');
    const responses = await Promise.all(
      Array.from({ length: 40 }, () => getOrCreate(server, admin, { user_group_id: id })),
    );
    for (const response of responses) expect(response.status, response.raw).toBe(200);
    expect(responses.filter((response) => response.body.new_user_group === true)).toHaveLength(1);
    expect(new Set(responses.map((response) => response.body.user_group.team_id)).size).toBe(1);
    expect(new Set(responses.map((response) => response.body.user_group.token)).size).toBe(1);

    const listed = await call(server, { method: 'GET', path: `/api/admin/user_groups?q=${id}`, token: admin });
    expect(listed.status, listed.raw).toBe(200);
    expect(listed.body.user_groups).toHaveLength(1);
  });

  it('a worker killed with SIGKILL: the service keeps answering and the primary starts another', async () => {
    const group = await makeGroup({ target: server, token: admin }, { id: uniqueId('survivor') });
    const [victim, survivor] = (await workersOf(server, 'two worker processes')) as [number, number];
    process.kill(victim, 'SIGKILL');
    // The primary reports the death once it has taken the worker out of its rotation.
    await waitFor('the primary to report the dead worker', 20_000, () =>
      server.stdout().includes('worker died') ? true : undefined,
    );

    for (let round = 0; round < 10; round++) {
      const response = await getOrCreate(server, admin, { user_group_id: group.provided_id });
      expect(response.status, response.raw).toBe(200);
      expect(response.body.user_group.team_id).toBe(group.team_id);
    }

    const replaced = await workersOf(
      server,
      'a new worker to replace the killed one',
      (pids) => !pids.includes(victim),
    );
    expect(replaced).toContain(survivor);
    expect(isUgsProcessAlive(victim)).toBe(false);
    for (const pid of replaced) workersSeen.add(pid);

    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        getOrCreate(server, admin, { user_group_id: uniqueId(`after_kill_${index}`) }),
      ),
    );
    for (const response of responses) expect(response.status, response.raw).toBe(200);
  });

  it('SIGTERM to the primary lets an in-flight request finish, exits 0 and leaves no worker behind; the banner came once', async () => {
    const workers = await workersOf(server, 'two worker processes');
    for (const pid of workers) workersSeen.add(pid);
    const held = heldGetOrCreate(server.baseUrl, admin, uniqueId('held'));
    await held.accepted;

    const exited = server.stop('SIGTERM');
    // Both workers have stopped listening (the primary then closes the shared socket): the drain is on.
    const { port } = new URL(server.baseUrl);
    await waitFor('the port to refuse new connections', 20_000, async () =>
      (await refusesConnections(Number(port))) ? true : undefined,
    );
    held.finish();

    const response = await held.response;
    expect(response.status, response.raw).toBe(200);
    expect(response.body.new_user_group).toBe(true);
    expect(await exited).toBe(0);

    for (const pid of workersSeen) expect(isUgsProcessAlive(pid), `worker ${pid}`).toBe(false);
    expect(isUgsProcessAlive(server.pid)).toBe(false);

    // The primary issued the tokens once every worker listened, into the file its log names; no
    // process wrote a token on stdout.
    const stdout = server.stdout();
    expect(stdout.match(/"msg":"first start: one admin API token/g)).toHaveLength(1);
    expect(stdout).not.toMatch(/ugs_(live|test)_/);
    expect(server.adminTokens().Customer).toBe(admin);
  });
});

describe('ugs serve --workers 2 that cannot start', () => {
  let db: TestDatabase;
  let blocker: Server;

  beforeAll(async () => {
    db = await createTestDatabase('sqlite');
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => blocker.close(resolve));
    await db.drop();
  });

  it('on a port in use: exits non-zero with the reason on stderr and leaves no worker behind', async () => {
    const port = (blocker.address() as AddressInfo).port;
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('UGS_')));
    const child = spawn(
      process.execPath,
      [UGS_BIN, 'serve', '--workers', String(WORKERS), '--port', String(port), '--database', db.url],
      {
        env: { ...env, UGS_LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    try {
      const outcome = await Promise.race([exited, sleep(20_000).then(() => 'still running after 20 s' as const)]);
      expect(outcome, stderr).not.toBe('still running after 20 s');
      expect(outcome).not.toBe(0);
      expect(stderr).toMatch(/EADDRINUSE/);
      expect(pidsWithArgument(db.url)).toEqual([]);
    } finally {
      for (const pid of [...pidsWithArgument(db.url)]) process.kill(pid, 'SIGKILL');
      await exited;
    }
  }, 40_000);
});
