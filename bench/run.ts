// `npm run bench`: seeds each engine × size, starts `ugs serve` (built dist, NODE_ENV=production,
// one process) and two ceilings (a bare node:http server, a bare Fastify route), drives both with wrk (a native load generator),
// prints a table and writes bench/results/<timestamp>.json and bench/results/latest.json.
// See bench/README.md.
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { postgresDatabase, postgresServerVersion, redact, sqliteDatabase, type BenchDatabase } from './databases.js';
import { drive, ensureWrk, measure, type LoadFigures } from './wrk.js';
import { parseOptions, SCENARIOS, USAGE, type BenchOptions, type Engine, type ScenarioName } from './options.js';
import { freePort, killChildrenNow, send, startNodeProcess, type Child } from './processes.js';
import { machine, row, table, type Row } from './report.js';
import { measureOfflineVerify, measureOfflineVerifyRepeated } from './offline-verify.js';
import { measureWebhookDrain } from './webhook-drain.js';
import { measureSync10k } from './sync-10k.js';
import { getExisting, IN_PROCESS, SCENARIO_FACTORIES, type Scenario, type ScenarioData } from './scenarios.js';

const OFFLINE_VERIFY =
  "distinct embed tokens, each verified in full offline by @ugs/client's verifier in the bench process, in turns with the crypto.verify ceiling (verifications/s; × the crypto.verify ceiling; CPU µs: the bench process's per verification; RSS: the service's)";
const CRYPTO_VERIFY =
  "node:crypto's verify of the same tokens' ES256 signatures, keys prepared as KeyObjects and signatures decoded beforehand, in the bench process (verifications/s; CPU µs: the bench process's per verification)";
const OFFLINE_VERIFY_REPEATED =
  "a dashboard's 8 embed tokens presented again and again to @ugs/client's verifier in the bench process, which remembers them (verifications/s; × the service's verify req/s of this block; CPU µs: the bench process's per verification; RSS: the service's)";
const SYNC_10K =
  'POST /api/admin/user_groups/sync of 10 000 new groups (NDJSON): plan (dry run), apply, then the same file planned again (phases, s); req/s and p50/p99: PUT /api/user renames made one at a time while the apply ran';
const WEBHOOK_DRAIN =
  'a backlog of 5 000 user_group.updated events drained to a receiver on loopback that answers 204 at once (deliveries/s; p50/p99: when the delivery arrived after the release, ms)';
import { seed, type Seeded } from './seed.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const RUN_ID = `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
const DATA_DIR = join(REPO, 'bench', '.data', RUN_ID);
const RESULTS_DIR = join(REPO, 'bench', 'results');
const PROFILES_DIR = join(REPO, 'bench', 'profiles', RUN_ID);

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** Removes this run's scratch files, and bench/.data itself once no other run uses it. */
function removeDataDir(): void {
  rmSync(DATA_DIR, { recursive: true, force: true });
  try {
    rmdirSync(dirname(DATA_DIR));
  } catch {
    // another run's files are still there
  }
}

/** Work to undo on any way out (drop a schema, remove files), newest first. */
const cleanups: (() => Promise<void>)[] = [];

/** Registers `cleanup` for any way out; the returned function runs it now (once) and unregisters it. */
function defer(cleanup: () => Promise<void>): () => Promise<void> {
  cleanups.push(cleanup);
  return async () => {
    const index = cleanups.lastIndexOf(cleanup);
    if (index === -1) return;
    cleanups.splice(index, 1);
    await cleanup();
  };
}

async function runCleanups(): Promise<void> {
  while (cleanups.length > 0) {
    const cleanup = cleanups.pop()!;
    await cleanup().catch((error: unknown) => log(`cleanup failed: ${String(error)}`));
  }
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    log(`\n${signal}: stopping every process this run started`);
    killChildrenNow();
    const bail = setTimeout(() => process.exit(130), 10_000);
    void runCleanups().finally(() => {
      clearTimeout(bail);
      process.exit(130);
    });
  });
}

/** The environment of a child: ours without UGS_* (a developer's settings must not leak in), plus `extra`. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('UGS_')));
  return { ...inherited, NODE_ENV: 'production', ...extra };
}

async function startService(
  db: BenchDatabase,
  options: BenchOptions,
  label: string,
  extraArgs: string[] = [],
): Promise<Child & { release(): Promise<void> }> {
  const port = await freePort();
  const profile = options.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', join(PROFILES_DIR, label)] : [];
  const service = await startNodeProcess({
    name: `ugs serve (${label})`,
    args: [
      ...profile,
      join(REPO, 'bin', 'ugs.js'),
      'serve',
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--database',
      db.url,
      '--log-level',
      'warn',
      // On, as in production, but far above what the load generator can send: the limiter's cost is
      // measured, and no request is refused.
      '--rate-limit',
      '1000000/s',
      '--workers',
      '1',
      ...extraArgs,
    ],
    port,
    readyPath: '/readyz',
    cwd: REPO,
    // The webhook-drain receiver is on loopback.
    env: childEnv({
      UGS_WEBHOOK_ALLOW_PRIVATE: 'true',
      ...(db.encryptionKey === undefined ? {} : { UGS_ENCRYPTION_KEY: db.encryptionKey }),
    }),
  });
  return { ...service, release: defer(() => service.stop()) };
}

const REPLAYED_HEADER_SKIP = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

/** One real get-or-create response of the service, saved for the ceiling server to replay byte for byte. */
async function captureResponse(service: Child, seeded: Seeded, file: string): Promise<number> {
  const request = getExisting({ seeded, createPrefix: '' }).run();
  const reply = await send(service.port, 'GET', '/api/user', request.headers, request.lines![0]!);
  if (reply.status !== 200 || !reply.body.includes('"new_user_group":false')) {
    throw new Error(
      `get-or-create of a seeded group answered ${reply.status}: ${reply.body.toString('utf8').slice(0, 500)}`,
    );
  }
  const headers = Object.fromEntries(
    Object.entries(reply.headers).filter(
      ([name, value]) => !REPLAYED_HEADER_SKIP.has(name) && typeof value === 'string',
    ),
  );
  writeFileSync(file, JSON.stringify({ headers, bodyBase64: reply.body.toString('base64') }));
  return reply.body.length;
}

interface ScenarioResult {
  scenario: string;
  describe: string;
  figures: LoadFigures;
  rssMb: number | null;
  /** req/s ÷ the node:http ceiling's. */
  ratioToCeiling: number | null;
  /** req/s ÷ the bare Fastify route's. */
  ratioToFastify?: number | null;
  /** What `ratioToCeiling` divides by when not the node:http ceiling: another row of the block. */
  ratioTo?: string;
}

interface BlockResult {
  engine: Engine;
  size: number;
  database: string;
  seed: { groups: number; seconds: number; groupsPerSecond: number; batch: number; parallel: number };
  responseBytes: number;
  ceiling: ScenarioResult;
  fastifyCeiling: ScenarioResult;
  scenarios: ScenarioResult[];
  usageCost?: UsageCost[];
}

/** The server's CPU per response with usage counting on and off, round by round (issue 29). */
interface UsageCost {
  scenario: 'get-existing' | 'verify';
  rounds: Array<{ onCpuUs: number | null; offCpuUs: number | null }>;
  /** (mean on / mean off − 1) × 100 over the rounds; null when a figure is missing. */
  costPercent: number | null;
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/**
 * Usage counting's cost: two services started fresh for it on the same database, one counting (as
 * in production) and one with `--usage off`, warmed up alike and driven alternately with the same
 * requests, `rounds` times each, the one measured first changing every round, so that the machine's
 * other load, and a service's age (the block's service has served every scenario before, with a
 * heap to match), fall on both alike.
 */
async function measureUsageCost(
  db: BenchDatabase,
  options: BenchOptions,
  label: string,
  data: ScenarioData,
  load: { connections: number; seconds: number; warmup: number },
): Promise<UsageCost[]> {
  const counting = await startService(db, options, `${label}-usage-on`, []);
  const off = await startService(db, options, `${label}-usage-off`, ['--usage', 'off']).catch(
    async (error: unknown) => {
      await counting.release();
      throw error;
    },
  );
  try {
    for (const service of [counting, off])
      if (options.serverWarmup > 0)
        await drive(service.port, getExisting(data).run(), options.connections, options.serverWarmup);
    const costs: UsageCost[] = [];
    for (const name of ['get-existing', 'verify'] as const) {
      const rounds: UsageCost['rounds'] = [];
      for (let round = 1; round <= options.usageCost && !interrupted; round++) {
        const cpuUs = async (service: Child) => {
          const scenario = SCENARIO_FACTORIES[name](data);
          return (
            await measure(
              service.port,
              scenario.run(),
              { ...load, serverCpuSeconds: service.cpuSeconds },
              scenario.warmup(),
            )
          ).cpuUsPerResponse;
        };
        // The first of two back-to-back measurements may meet a machine the other does not.
        const first = round % 2 === 1 ? counting : off;
        const firstCpuUs = await cpuUs(first);
        const secondCpuUs = await cpuUs(first === counting ? off : counting);
        const [onCpuUs, offCpuUs] = first === counting ? [firstCpuUs, secondCpuUs] : [secondCpuUs, firstCpuUs];
        rounds.push({ onCpuUs, offCpuUs });
        log(
          `  usage cost, ${name}, round ${round}: ${onCpuUs ?? '–'} µs CPU each counting, ${offCpuUs ?? '–'} µs with --usage off`,
        );
      }
      const on = rounds.map((r) => r.onCpuUs);
      const offs = rounds.map((r) => r.offCpuUs);
      const complete = (values: (number | null)[]): values is number[] =>
        values.length > 0 && values.every((v) => v !== null);
      const costPercent = complete(on) && complete(offs) ? Math.round((mean(on) / mean(offs) - 1) * 1000) / 10 : null;
      log(`  usage cost, ${name}: ${costPercent ?? '–'} % CPU per response over ${rounds.length} rounds`);
      costs.push({ scenario: name, rounds, costPercent });
    }
    return costs;
  } finally {
    await off.release();
    await counting.release();
  }
}

/** The scenarios to run, in run order: offline-verify-repeated brings verify, whose rate it is compared with. */
function scenarioNames(options: BenchOptions): ScenarioName[] {
  const wanted = new Set(options.scenarios);
  if (wanted.has('offline-verify-repeated')) wanted.add('verify');
  return SCENARIOS.filter((name) => wanted.has(name));
}

async function runBlock(engine: Engine, size: number, options: BenchOptions, rows: Row[]): Promise<BlockResult> {
  const label = `${engine}-${size}`;
  log(`\n== ${engine}, ${size.toLocaleString('en-US')} groups`);
  const db = engine === 'sqlite' ? sqliteDatabase(DATA_DIR, size) : await postgresDatabase(options.postgresUrl, size);
  const dropDatabase = defer(() => db.drop());
  log(`  database: ${db.describe}`);

  const seeded = await seed(db, size, {
    batch: options.seedBatch,
    parallel: options.seedParallel,
    sample: options.sample,
    nested: options.scenarios.includes('get-nested'),
    ruled: options.scenarios.includes('embed-token-rules'),
  });
  const groupsPerSecond = Math.round(size / seeded.seconds);
  log(
    `  seeding: ${size.toLocaleString('en-US')} groups in ${seeded.seconds.toFixed(1)} s (${groupsPerSecond.toLocaleString('en-US')} groups/s)`,
  );
  if (engine === 'postgres' && !options.noAnalyze) {
    const analyzeStarted = performance.now();
    await db.analyze();
    log(`  ANALYZE of the schema's tables: ${((performance.now() - analyzeStarted) / 1000).toFixed(1)} s`);
  }

  const service = await startService(db, options, label);
  log(`  service: pid ${service.pid}, port ${service.port}, RSS ${service.rssMb() ?? '?'} MB at start`);

  const captureFile = join(DATA_DIR, `capture-${label}.json`);
  mkdirSync(DATA_DIR, { recursive: true });
  const responseBytes = await captureResponse(service, seeded, captureFile);

  const load = { connections: options.connections, seconds: options.duration, warmup: options.warmup };
  const data: ScenarioData = { seeded, createPrefix: `new-${RUN_ID}-` };

  if (options.serverWarmup > 0) {
    log(`  warming the service up: ${options.serverWarmup} s of get-existing, not recorded`);
    await drive(service.port, getExisting(data).run(), options.connections, options.serverWarmup);
  }

  // The ceilings, measured right before the scenarios they are compared with, with the same requests:
  // node:http (what any Node HTTP server spends) and a bare Fastify route (what the framework spends).
  const measureCeiling = async (kind: 'node:http' | 'Fastify'): Promise<ScenarioResult> => {
    const ceilingPort = await freePort();
    const script = kind === 'node:http' ? 'ceiling-server.ts' : 'ceiling-fastify.ts';
    const ceilingServer = await startNodeProcess({
      name: `ceiling server (${kind})`,
      args: ['--import', 'tsx', join(REPO, 'bench', script), String(ceilingPort), captureFile],
      port: ceilingPort,
      readyPath: '/',
      cwd: REPO,
      env: childEnv({}),
    });
    const stopCeiling = defer(() => ceilingServer.stop());
    log(`  ceiling (${kind}): answering the ${responseBytes} bytes of a real get-or-create response`);
    const ceilingScenario = getExisting(data, 'ceiling');
    const figures = await measure(ceilingPort, ceilingScenario.run(), {
      ...load,
      serverCpuSeconds: ceilingServer.cpuSeconds,
    });
    const rssMb = ceilingServer.rssMb();
    await stopCeiling();
    log(
      `  ceiling (${kind}): ${Math.round(figures.okPerSecond)} req/s, p99 ${figures.latencyMs.p99} ms, errors ${figures.errors.total}, ${figures.cpuUsPerResponse ?? '–'} µs CPU each`,
    );
    return { scenario: `ceiling (${kind})`, describe: ceilingScenario.describe, figures, rssMb, ratioToCeiling: null };
  };
  const ceiling = await measureCeiling('node:http');
  const fastifyCeiling = await measureCeiling('Fastify');
  const ceilingPerSecond = ceiling.figures.okPerSecond;
  const fastifyPerSecond = fastifyCeiling.figures.okPerSecond;
  for (const measured of [ceiling, fastifyCeiling]) {
    const result = row(
      engine,
      size,
      measured.scenario,
      measured.figures,
      ceilingPerSecond,
      fastifyPerSecond,
      measured.rssMb,
    );
    measured.ratioToCeiling = result.ratioToCeiling;
    measured.ratioToFastify = result.ratioToFastify;
    rows.push(result);
  }

  const scenarios: ScenarioResult[] = [];
  /** Each scenario's successful responses per second in this block, for the ratios that divide by one. */
  const perSecond = new Map<string, number>();
  for (const name of scenarioNames(options)) {
    if (interrupted) break;
    const scenario: Scenario | undefined = (IN_PROCESS as readonly string[]).includes(name)
      ? undefined
      : SCENARIO_FACTORIES[name as keyof typeof SCENARIO_FACTORIES](data);
    let figures: LoadFigures;
    let describe = scenario?.describe ?? '';
    let ratioTo: { name: string; perSecond: number } | undefined;
    if (scenario) {
      figures = await measure(
        service.port,
        scenario.run(),
        { ...load, serverCpuSeconds: service.cpuSeconds },
        scenario.warmup(),
      );
    } else if (name === 'webhook-drain') {
      figures = await measureWebhookDrain(service.port, seeded);
      describe = WEBHOOK_DRAIN;
    } else if (name === 'offline-verify') {
      const measured = await measureOfflineVerify(service.port, seeded, load);
      const ceilingName = 'ceiling (crypto.verify)';
      const cryptoPerSecond = measured.ceiling.okPerSecond;
      rows.push(row(engine, size, ceilingName, measured.ceiling, cryptoPerSecond, null, null));
      scenarios.push({
        scenario: ceilingName,
        describe: CRYPTO_VERIFY,
        figures: measured.ceiling,
        rssMb: null,
        ratioToCeiling: 1,
        ratioTo: ceilingName,
      });
      log(
        `  ${ceilingName}: ${Math.round(cryptoPerSecond)} verifications/s, ${measured.ceiling.cpuUsPerResponse ?? '–'} µs CPU each`,
      );
      figures = measured.verifier;
      describe = OFFLINE_VERIFY;
      ratioTo = { name: ceilingName, perSecond: cryptoPerSecond };
    } else if (name === 'sync-10k') {
      figures = await measureSync10k(service.port, seeded, log);
      describe = SYNC_10K;
    } else {
      figures = await measureOfflineVerifyRepeated(service.port, seeded, load);
      describe = OFFLINE_VERIFY_REPEATED;
      ratioTo = { name: 'verify', perSecond: perSecond.get('verify') ?? 0 };
    }
    perSecond.set(name, figures.okPerSecond);
    const rssMb = service.rssMb();
    const result = row(
      engine,
      size,
      name,
      figures,
      ratioTo?.perSecond ?? ceilingPerSecond,
      ratioTo ? null : fastifyPerSecond,
      rssMb,
    );
    rows.push(result);
    scenarios.push({
      scenario: name,
      describe,
      figures,
      rssMb,
      ratioToCeiling: result.ratioToCeiling,
      ratioToFastify: result.ratioToFastify,
      ...(ratioTo ? { ratioTo: ratioTo.name } : {}),
    });
    const codes = Object.entries(figures.statusCodes)
      .map(([code, count]) => `${code}×${count}`)
      .join(' ');
    log(
      `  ${name}: ${result.reqPerSec} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, errors ${result.errors}` +
        ` (${codes || 'no responses'}${figures.errors.socket ? `, ${figures.errors.socket} socket errors` : ''}` +
        `${figures.errors.wrongOutcome ? `, ${figures.errors.wrongOutcome} wrong outcomes` : ''}), ×${result.ratioToCeiling ?? '–'}${ratioTo ? ` (of ${ratioTo.name})` : ` node:http, ×${result.ratioToFastify ?? '–'} Fastify`}, ${result.cpuUs ?? '–'} µs CPU each, RSS ${rssMb ?? '?'} MB`,
    );
  }

  const usageCost =
    options.usageCost > 0 && !interrupted ? await measureUsageCost(db, options, label, data, load) : undefined;

  await service.release();
  await dropDatabase();
  return {
    engine,
    size,
    database: db.describe,
    seed: {
      groups: size,
      seconds: Math.round(seeded.seconds * 10) / 10,
      groupsPerSecond,
      batch: options.seedBatch,
      parallel: engine === 'postgres' ? options.seedParallel : 1,
    },
    responseBytes,
    ceiling,
    fastifyCeiling,
    scenarios,
    ...(usageCost ? { usageCost } : {}),
  };
}

async function main(): Promise<number> {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(process.argv.slice(2));
  } catch (error) {
    log(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (parsed === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const options = parsed;
  ensureWrk();
  const command = ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ');
  const startedAt = new Date();
  const host = machine();
  const engines: Record<string, string> = {};
  if (options.engines.includes('sqlite')) engines.sqlite = 'better-sqlite3 (WAL, synchronous=FULL)';
  if (options.engines.includes('postgres')) {
    const version = await postgresServerVersion(options.postgresUrl).catch((error: unknown) => {
      throw new Error(
        `PostgreSQL at ${redact(options.postgresUrl)} does not answer (${String(error)}): set UGS_BENCH_POSTGRES_URL, or run --engines sqlite`,
      );
    });
    engines.postgres = `PostgreSQL ${version} at ${redact(options.postgresUrl)}`;
  }
  log(
    `${command}\n${host.cpuCount} × ${host.cpuModel}, ${host.totalMemoryMb} MB, Node ${host.node}, load ${host.loadAverageAtStart.join(' ')}`,
  );
  if (options.duration < 10)
    log(`note: ${options.duration} s per scenario is a smoke run; the figures of record use at least 10 s`);

  const rows: Row[] = [];
  const blocks: BlockResult[] = [];
  let failure: unknown;
  defer(async () => removeDataDir());
  try {
    for (const engine of options.engines) {
      for (const size of options.sizes) {
        if (interrupted) break;
        blocks.push(await runBlock(engine, size, options, rows));
      }
    }
  } catch (error) {
    failure = error;
  } finally {
    await runCleanups();
  }

  const finishedAt = new Date();
  process.stdout.write(`\n${command}\n`);
  process.stdout.write(
    `${host.cpuCount} × ${host.cpuModel}, ${host.totalMemoryMb} MB RAM, Node ${host.node}, ${host.os}\n`,
  );
  process.stdout.write(
    `${options.connections} connections, ${options.duration} s per scenario after ${options.warmup} s warm-up` +
      ` (each service first warmed up for ${options.serverWarmup} s); req/s counts successful responses only\n\n`,
  );
  process.stdout.write(`${table(rows)}\n`);
  for (const block of blocks) {
    for (const cost of block.usageCost ?? [])
      process.stdout.write(
        `usage counting, ${block.engine} ${block.size.toLocaleString('en-US')}, ${cost.scenario}: ${cost.costPercent ?? '–'} % server CPU per response ` +
          `(on/off µs: ${cost.rounds.map((r) => `${r.onCpuUs ?? '–'}/${r.offCpuUs ?? '–'}`).join(', ')})\n`,
      );
    process.stdout.write(
      `seeding ${block.engine} ${block.size.toLocaleString('en-US')}: ${block.seed.seconds} s (${block.seed.groupsPerSecond.toLocaleString('en-US')} groups/s)\n`,
    );
  }

  const results = {
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    command,
    options: { ...options, postgresUrl: redact(options.postgresUrl) },
    machine: { ...host, loadAverageAtEnd: loadavg().map((load) => Math.round(load * 100) / 100) },
    engines,
    rows,
    blocks,
    ...(failure === undefined
      ? {}
      : { error: String(failure instanceof Error ? (failure.stack ?? failure.message) : failure) }),
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${startedAt.toISOString().replace(/:/g, '-')}.json`);
  const json = `${JSON.stringify(results, null, 2)}\n`;
  writeFileSync(file, json);
  writeFileSync(join(RESULTS_DIR, 'latest.json'), json);
  process.stdout.write(`\nresults: ${file}\n`);
  if (options.cpuProf) process.stdout.write(`profiles: ${PROFILES_DIR}\n`);

  if (failure !== undefined) {
    log(`\nbench failed: ${failure instanceof Error ? (failure.stack ?? failure.message) : String(failure)}`);
    return 1;
  }
  return interrupted ? 130 : 0;
}

main().then(
  (code) => {
    killChildrenNow();
    process.exit(code);
  },
  (error: unknown) => {
    log(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    killChildrenNow();
    process.exit(1);
  },
);
