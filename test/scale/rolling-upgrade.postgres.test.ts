// A rolling upgrade on PostgreSQL, as a platform team runs one: two instances of the previous release
// behind a load balancer that follows /readyz, under a steady load of reads and writes; an instance
// of this release starts (and migrates the database under that load), the old ones are replaced one
// at a time (deregistered, then SIGTERM after the preStop delay), and one old instance is restarted
// in the middle of it — on a database this release has already migrated. No request may fail, no
// acknowledged write may be lost, and the new schema is in place at the end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LIVE_TOKEN,
  secretsIn,
  startServeProcess,
  stopAllServeProcesses,
  type ServeProcess,
} from '../support/serve-process.js';
import { createTestDatabase, withPostgresClient, type TestDatabase } from '../support/test-database.js';
import { startReadinessBalancer, type ReadinessBalancer } from '../support/readiness-balancer.js';
import { buildRelease, type ReleaseBuild } from '../support/release-build.js';
import { call, type ApiResponse } from '../support/http-client.js';
import { getOrCreate, verify } from '../support/user-group-api.js';
import { sleep, waitFor } from '../support/wait-for.js';
import { uniqueId } from '../support/unique-id.js';
import { MIGRATIONS } from '../../src/store/postgres/migrations/index.js';

/** The release before this one's migrations (0.1.0): the version a deployment upgrades from. */
const PREVIOUS_RELEASE = 'a1f95d35c07cee650e55173c716a9feaa80be73e';
/** What an orchestrator waits between deregistering an instance and sending it SIGTERM (preStop). */
const PRE_STOP_DELAY_MS = 500;
const LOAD_WORKERS = 6;

let db: TestDatabase;
let previous: ReleaseBuild;
let balancer: ReadinessBalancer;
let admin: string;

beforeAll(async () => {
  [db, previous] = await Promise.all([createTestDatabase('postgres'), buildRelease(PREVIOUS_RELEASE)]);
  balancer = await startReadinessBalancer();
}, 240_000);

afterAll(async () => {
  await stopAllServeProcesses();
  await balancer?.close();
  await previous?.remove();
  await db?.drop();
});

const options = (ugs?: string) => ({
  // One public URL for every instance, as behind one balancer; the preStop-like delay on the new release.
  env: { UGS_PUBLIC_URL: 'https://ugs.example.test', UGS_SHUTDOWN_DELAY_MS: '300' },
  ...(ugs === undefined ? {} : { ugs }),
});

/** Starts an instance and puts it behind the balancer once it is ready. */
async function join(ugs?: string): Promise<ServeProcess> {
  const instance = await startServeProcess(db, options(ugs));
  balancer.register(instance.baseUrl);
  return instance;
}

/** Takes an instance out as an orchestrator does: deregistered, the preStop delay, then SIGTERM. */
async function retire(instance: ServeProcess): Promise<void> {
  balancer.deregister(instance.baseUrl);
  await sleep(PRE_STOP_DELAY_MS);
  expect(await instance.stop('SIGTERM')).toBe(0);
}

interface Load {
  stop(): Promise<void>;
  requests: number;
  failures: string[];
  /** provided id → the name its last acknowledged write gave it, and its token. */
  acknowledged: Map<string, { name: string; token: string }>;
}

/** Workers looping get-or-create of new groups, reads, renames and verifies through the balancer until stopped. */
function steadyLoad(): Load {
  let running = true;
  const load: Load = { requests: 0, failures: [], acknowledged: new Map(), stop: async () => undefined };
  const expectOk = (what: string, response: ApiResponse) => {
    load.requests += 1;
    if (response.status !== 200) load.failures.push(`${what}: ${response.status} ${response.raw.slice(0, 200)}`);
    return response.status === 200;
  };
  const worker = async (index: number) => {
    for (let round = 0; running; round += 1) {
      const id = uniqueId(`upgrade-${index}`);
      try {
        const created = await getOrCreate(balancer, admin, { user_group_id: id, name: `Group ${round}` });
        if (!expectOk('create', created)) continue;
        const token = created.body.user_group.token as string;
        load.acknowledged.set(id, { name: `Group ${round}`, token });
        const renamed = await call(balancer, {
          method: 'PUT',
          path: '/api/user',
          token: admin,
          body: { user_group_id: id, name: `Renamed ${round}` },
        });
        if (expectOk('update', renamed)) load.acknowledged.set(id, { name: `Renamed ${round}`, token });
        expectOk('read', await getOrCreate(balancer, admin, { user_group_id: id }));
        expectOk('verify', await verify(balancer, admin, token));
      } catch (error) {
        load.failures.push(`request failed: ${String(error)}`);
      }
    }
  };
  const workers = Array.from({ length: LOAD_WORKERS }, (_, index) => worker(index));
  load.stop = async () => {
    running = false;
    await Promise.all(workers);
  };
  return load;
}

/** Waits until the load has made `more` requests beyond where it is now. */
const progress = (load: Load, more: number) => {
  const target = load.requests + more;
  return waitFor(`${more} more requests`, 60_000, () => (load.requests >= target ? true : undefined));
};

describe('a rolling upgrade from the previous release on PostgreSQL', () => {
  it('replaces two old instances one at a time, an old one restarted on the migrated database, under load: no failed request, no lost write', async () => {
    const oldA = await join(previous.ugs);
    // 0.1.0 printed its first-start tokens in a banner on stdout (later releases write them to a file).
    [admin] = secretsIn(oldA.stdout(), LIVE_TOKEN) as [string];
    expect(admin).toMatch(LIVE_TOKEN);
    const oldB = await join(previous.ugs);
    await waitFor('a ready instance behind the balancer', 10_000, async () =>
      (await call(balancer, { method: 'GET', path: '/readyz' })).status === 200 ? true : undefined,
    );

    const load = steadyLoad();
    let newC: ServeProcess, newD: ServeProcess;
    try {
      await progress(load, 100);
      // This release starts beside them and migrates the database while they serve.
      newC = await join();
      await progress(load, 100);
      await retire(oldA);
      await progress(load, 100);

      // An old instance restarted mid-way (a reschedule, a rollback) starts on the expanded schema.
      await retire(oldB);
      const oldB2 = await join(previous.ugs);
      await progress(load, 100);

      newD = await join();
      await progress(load, 100);
      await retire(oldB2);
      await progress(load, 100);
    } finally {
      await load.stop();
    }

    expect(load.failures).toEqual([]);
    // Every instance served part of the load.
    const served = balancer.sent();
    for (const instance of [newC, newD]) expect(served.get(instance.baseUrl)).toBeGreaterThan(0);
    expect(load.acknowledged.size).toBeGreaterThan(100);
    for (const [id, { name, token }] of load.acknowledged) {
      const read = await getOrCreate(newD, admin, { user_group_id: id });
      expect(read.status, read.raw).toBe(200);
      expect(read.body.new_user_group, id).toBe(false);
      expect(read.body.user_group).toMatchObject({ provided_id: id, name, token });
    }

    const expansions = MIGRATIONS.filter(({ kind }) => kind === 'expand').map(({ version }) => ({ version }));
    expect(expansions.length).toBeGreaterThan(0);
    await withPostgresClient(async (client) => {
      expect((await client.query('SELECT version FROM schema_expansions ORDER BY version')).rows).toEqual(expansions);
      const invalid = await client.query(
        'SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE NOT i.indisvalid AND c.relnamespace = current_schema()::regnamespace',
      );
      expect(invalid.rows).toEqual([]);
    }, db.url);
  }, 240_000);
});
