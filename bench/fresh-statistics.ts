// What a fresh PostgreSQL database costs the service, measured in ways the shared machine's noise
// does not move: the database's own counters (rows returned and fetched, buffers, scans per table)
// and the CPU of the service's PostgreSQL backends, per response, for the same requests on the same
// seeded data in four states: as seeded (no statistics, no VACUUM), after ANALYZE, after VACUUM
// (visibility map and hint bits set, no column statistics) and after VACUUM (ANALYZE).
//
//   node --import tsx bench/fresh-statistics.ts [--size 10000] [--requests 2000] [--concurrency 32]
//        [--states fresh,analyze,vacuum,vacuum-analyze] [--scenarios update,create,rotate,get-existing]
//
// PostgreSQL is UGS_BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test); give it a
// database of its own (createdb): the figures are pg_stat_database's, the whole database's.
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { postgresDatabase, serveFlags, type BenchDatabase } from './databases.js';
import { backendCpuCounter } from './postgres-backends.js';
import { freePort, send, startNodeProcess, type Child } from './processes.js';
import { groupProperties, seed, type Seeded } from './seed.js';

const REPO = join(import.meta.dirname, '..');
const STATES = ['fresh', 'analyze', 'vacuum', 'vacuum-analyze'] as const;
type State = (typeof STATES)[number];
const SCENARIOS = ['update', 'create', 'rotate', 'get-existing'] as const;
type ScenarioName = (typeof SCENARIOS)[number];

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '10000' },
    requests: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '32' },
    states: { type: 'string', default: STATES.join(',') },
    scenarios: { type: 'string', default: 'update,create,rotate' },
    // Seed one fresh schema and leave it (no scenarios), for EXPLAIN by hand.
    keep: { type: 'boolean', default: false },
  },
});
const size = Number(values.size);
const requests = Number(values.requests);
const concurrency = Number(values.concurrency);
const states = values.states.split(',') as State[];
const scenarios = values.scenarios.split(',') as ScenarioName[];
for (const name of states)
  if (!STATES.includes(name)) throw new Error(`--states: ${name} is none of ${STATES.join(', ')}`);
for (const name of scenarios)
  if (!SCENARIOS.includes(name)) throw new Error(`--scenarios: ${name} is none of ${SCENARIOS.join(', ')}`);
const baseUrl = process.env.UGS_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const log = (message: string) => process.stdout.write(`${message}\n`);

async function withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

interface Counters {
  database: Record<string, number>;
  tables: Map<string, Record<string, number>>;
  indexes: Map<string, number>;
}

/** The database's counters and the schema's per table and per index (flushed: read after the backends exit). */
async function counters(schema: string): Promise<Counters> {
  return withClient(async (client) => {
    const [database] = (
      await client.query(
        `SELECT xact_commit, tup_returned, tup_fetched, tup_inserted, tup_updated, blks_hit, blks_read
           FROM pg_stat_database WHERE datname = current_database()`,
      )
    ).rows;
    const tables = new Map<string, Record<string, number>>();
    for (const row of (
      await client.query(
        `SELECT t.relname, t.seq_scan, t.seq_tup_read, coalesce(t.idx_scan, 0) AS idx_scan,
                coalesce(t.idx_tup_fetch, 0) AS idx_tup_fetch, t.n_tup_upd, t.n_tup_hot_upd,
                coalesce(s.heap_blks_hit, 0) + coalesce(s.heap_blks_read, 0) AS heap_blks,
                coalesce(s.idx_blks_hit, 0) + coalesce(s.idx_blks_read, 0) AS idx_blks
           FROM pg_stat_user_tables t JOIN pg_statio_user_tables s USING (relid)
          WHERE t.schemaname = $1`,
        [schema],
      )
    ).rows)
      tables.set(
        row.relname,
        Object.fromEntries(
          Object.entries(row)
            .filter(([k]) => k !== 'relname')
            .map(([k, v]) => [k, Number(v)]),
        ),
      );
    const indexes = new Map<string, number>();
    for (const row of (
      await client.query(`SELECT indexrelname, idx_scan FROM pg_stat_user_indexes WHERE schemaname = $1`, [schema])
    ).rows)
      indexes.set(row.indexrelname, Number(row.idx_scan));
    return {
      database: Object.fromEntries(Object.entries(database!).map(([k, v]) => [k, Number(v)])),
      tables,
      indexes,
    };
  });
}

async function prepare(schema: string, state: State): Promise<void> {
  if (state === 'fresh') return;
  const command = { analyze: 'ANALYZE', vacuum: 'VACUUM', 'vacuum-analyze': 'VACUUM (ANALYZE)' }[state];
  await withClient(async (client) => {
    const { rows } = await client.query<{ tablename: string }>(
      'SELECT tablename FROM pg_tables WHERE schemaname = $1',
      [schema],
    );
    for (const { tablename } of rows) await client.query(`${command} ${schema}."${tablename}"`);
  });
}

function startService(db: BenchDatabase, port: number): Promise<Child> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('UGS_')));
  return startNodeProcess({
    name: 'ugs serve',
    args: [join(REPO, 'bin', 'ugs.js'), 'serve', '--port', String(port), ...serveFlags(db)],
    port,
    readyPath: '/readyz',
    cwd: REPO,
    env: { ...env, NODE_ENV: 'production', UGS_ENCRYPTION_KEY: db.encryptionKey! },
  });
}

/** The n-th request of a scenario: method, path and body, as bench/scenarios.ts sends them. */
function requestOf(name: ScenarioName, seeded: Seeded, tokens: string[], n: number, run: string) {
  const i = n % seeded.ids.length;
  switch (name) {
    case 'update':
      return {
        method: 'PUT',
        path: '/api/user',
        body:
          n % 2 === 0
            ? { user_group_id: seeded.ids[i], name: `${seeded.names[i]} (rev ${run}-${n})` }
            : { user_group_id: seeded.ids[i], properties: { ...groupProperties(i), revision: `${run}-${n}` } },
      };
    case 'create':
      return {
        method: 'GET',
        path: '/api/user',
        body: {
          user_group_id: `new-${run}-${n}`,
          name: `New group ${n}`,
          mapping: seeded.mappingInput,
          properties: groupProperties(n),
        },
      };
    case 'rotate':
      return { method: 'POST', path: '/api/user', body: { current_token: tokens[n]! } };
    case 'get-existing':
      return { method: 'GET', path: '/api/user', body: { user_group_id: seeded.ids[i] } };
  }
}

async function drive(port: number, name: ScenarioName, seeded: Seeded, run: string, count: number, offset = 0) {
  const headers = { authorization: `Token ${seeded.apiToken}` };
  const tokens = seeded.tokens;
  let next = offset;
  let failed = 0;
  const worker = async () => {
    while (next < offset + count) {
      const n = next;
      next += 1;
      const { method, path, body } = requestOf(name, seeded, tokens, n, run);
      const reply = await send(port, method, path, headers, JSON.stringify(body)).catch((error: Error) => ({
        status: 0,
        body: Buffer.from(error.message),
      }));
      if (reply.status !== 200) {
        failed += 1;
        if (failed < 3) log(`    ${name} ${n}: ${reply.status} ${reply.body.toString().slice(0, 200)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return failed;
}

const per = (value: number) => (value / requests).toFixed(2);

async function main(): Promise<void> {
  const results: Record<string, unknown>[] = [];
  for (const state of states) {
    log(`\n== ${state}: ${size} groups`);
    const db = await postgresDatabase(baseUrl, size);
    const schema = `bench_${size}`;
    try {
      const seeded = await seed(db, size, { batch: 1000, parallel: 2, sample: 50000, nested: false, ruled: false });
      await prepare(schema, state);
      if (values.keep) {
        log(`  kept: schema ${schema}, API token ${seeded.apiToken}`);
        return;
      }
      for (const name of scenarios) {
        const port = await freePort();
        let service = await startService(db, port);
        // JIT warm-up of the service on a handful of groups (they stay in the buffer cache either way).
        for (let i = 0; i < 3; i += 1) await drive(port, 'get-existing', seeded, 'w', 200, 0).catch(() => 0);
        await service.stop();
        service = await startService(db, port);
        await sleep(300);
        const before = await counters(schema);
        const backendCpuSince = await backendCpuCounter(baseUrl);
        const serviceCpuBefore = service.cpuSeconds() ?? 0;
        const started = performance.now();
        let failed: number;
        let backendCpu: number;
        let serviceCpu: number;
        let seconds: number;
        try {
          failed = await drive(port, name, seeded, `${state}${Date.now()}`, requests);
          seconds = (performance.now() - started) / 1000;
          backendCpu = await backendCpuSince();
          serviceCpu = (service.cpuSeconds() ?? 0) - serviceCpuBefore;
        } finally {
          await service.stop();
        }
        await sleep(700);
        const after = await counters(schema);
        const d = (key: string) => after.database[key]! - before.database[key]!;
        const tables = [...after.tables].map(([table, row]) => {
          const was = before.tables.get(table)!;
          return [table, Object.fromEntries(Object.keys(row).map((k) => [k, row[k]! - was[k]!]))] as const;
        });
        const indexes = [...after.indexes]
          .map(([index, scans]) => [index, scans - (before.indexes.get(index) ?? 0)] as const)
          .filter(([, scans]) => scans > 0);
        const result = {
          state,
          scenario: name,
          requests,
          failed,
          reqPerSecond: Math.round(requests / seconds),
          backendCpuUsPerResponse: Math.round((backendCpu * 1e6) / requests),
          serviceCpuUsPerResponse: Math.round((serviceCpu * 1e6) / requests),
          perResponse: {
            commits: per(d('xact_commit')),
            tupReturned: per(d('tup_returned')),
            tupFetched: per(d('tup_fetched')),
            blksHit: per(d('blks_hit')),
            blksRead: per(d('blks_read')),
          },
          tables: Object.fromEntries(
            tables
              .filter(([, row]) => Object.values(row).some((v) => v !== 0))
              .map(([table, row]) => [
                table,
                Object.fromEntries(
                  Object.entries(row)
                    .filter(([, v]) => v !== 0)
                    .map(([k, v]) => [k, per(v)]),
                ),
              ]),
          ),
          indexScans: Object.fromEntries(indexes.map(([index, scans]) => [index, per(scans)])),
        };
        results.push(result);
        log(
          `  ${name}: ${result.reqPerSecond}/s (noisy), PostgreSQL backends ${result.backendCpuUsPerResponse} µs CPU/response, service ${result.serviceCpuUsPerResponse} µs; per response ${JSON.stringify(result.perResponse)}`,
        );
        for (const [table, row] of Object.entries(result.tables)) log(`    ${table}: ${JSON.stringify(row)}`);
        log(`    index scans: ${JSON.stringify(result.indexScans)}`);
      }
    } finally {
      if (!values.keep) await db.drop();
    }
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

await main();
