// `npm run bench`: seeds each engine × size, starts `ugs serve` (built dist, NODE_ENV=production,
// one process) and two ceilings (a bare node:http server, a bare Fastify route), drives both with wrk (a native load generator),
// prints a table and writes bench/results/<timestamp>.json and bench/results/latest.json.
// See bench/README.md.
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  postgresDatabase,
  postgresServerVersion,
  redact,
  serveFlags,
  sqliteDatabase,
  type BenchDatabase,
} from './databases.js';
import { drive, ensureWrk, measure, type LoadFigures } from './wrk.js';
import {
  KEPT_ABOVE,
  MUTATING,
  parseOptions,
  SCENARIOS,
  USAGE,
  type BenchOptions,
  type Engine,
  type ScenarioName,
  ADMIN,
} from './options.js';
import { freePort, killChildrenNow, pinApart, send, startNodeProcess, type Child } from './processes.js';
import { machine, row, table, type Row } from './report.js';
import { measureOfflineVerify, measureOfflineVerifyRepeated, mintTokens } from './offline-verify.js';
import { measureWebhookDrain } from './webhook-drain.js';
import { measureSync10k } from './sync-10k.js';
import { measureSyncPrune10k } from './sync-prune-10k.js';
import {
  ADMIN_REQUESTS,
  getExisting,
  IN_PROCESS,
  SCENARIO_FACTORIES,
  type Scenario,
  type ScenarioData,
} from './scenarios.js';
import { measureOneAtATime } from './one-at-a-time.js';
import { describeMemory, memoryBreakdownOf, type MemoryBreakdown } from './memory.js';

const isAdmin = (name: ScenarioName): name is (typeof ADMIN)[number] => (ADMIN as readonly string[]).includes(name);

const OFFLINE_VERIFY =
  "distinct embed tokens, each verified in full offline by @ugs/client's verifier in the bench process, in turns with the crypto.verify ceiling (verifications/s; × the crypto.verify ceiling; CPU µs: the bench process's per verification; RSS: the service's)";
const OFFLINE_VERIFY_REVOCATIONS =
  "the same distinct tokens verified by @ugs/client's verifier with revocation checking on (the issuer's revocation document fetched once and cached), in turns with the verifier without it (verifications/s; × the verifier without it; CPU µs: the bench process's per verification)";
const CRYPTO_VERIFY =
  "node:crypto's verify of the same tokens' ES256 signatures, keys prepared as KeyObjects and signatures decoded beforehand, in the bench process (verifications/s; CPU µs: the bench process's per verification)";
const OFFLINE_VERIFY_REPEATED =
  "a dashboard's 8 embed tokens presented again and again to @ugs/client's verifier in the bench process, which remembers them (verifications/s; × the service's verify req/s of this block; CPU µs: the bench process's per verification; RSS: the service's)";
const SYNC_10K =
  'POST /api/admin/user_groups/sync of 10 000 new groups (NDJSON): plan (dry run), apply, then the same file planned again (phases, s); req/s and p50/p99: PUT /api/user renames made one at a time while the apply ran';
const SYNC_PRUNE_10K =
  'POST /api/admin/user_groups/sync with prune=TAG of a file that leaves out 10 000 tagged groups (1 000 roots, nine children each): plan (dry run), then apply (phases, s); req/s and p50/p99: GET /healthz made one at a time while each phase ran';
const WEBHOOK_DRAIN =
  'a backlog of 5 000 user_group.updated events drained to a receiver on loopback that answers 204 at once (deliveries/s; p50/p99: when the delivery arrived after the release, ms)';
import { seed, type Seeded } from './seed.js';
import { DEFAULT_USAGE_FLUSH_MS } from '../src/domain/usage/usage.rules.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const RUN_ID = `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
const DATA_DIR = join(REPO, 'bench', '.data', RUN_ID);
/** Embed tokens embed-token-verify presents in turn: one per group of the sample's first part. */
const EMBED_VERIFY_TOKENS = 1000;
const RESULTS_DIR = join(REPO, 'bench', 'results');
/** Kept databases (SQLite files) and their side files, between runs. */
const KEPT_DIR = join(REPO, 'bench', '.data', 'scale');
/** The page admin-page-1000 asks for, walked to from the first. */
const CURSOR_PAGE = 1000;
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

/**
 * Node's flags for the service, as the container image, the systemd unit and the Kubernetes manifest
 * start it (their NODE_OPTIONS; docs/deployment.md#memory): the young generation held to 16 MiB
 * semi-spaces rather than sized from the host's memory.
 */
const SERVICE_NODE_FLAGS = ['--max-semi-space-size=16'];

async function startService(
  db: BenchDatabase,
  options: BenchOptions,
  label: string,
): Promise<Child & { release(): Promise<void> }> {
  const port = await freePort();
  const profile = options.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', join(PROFILES_DIR, label)] : [];
  const service = await startNodeProcess({
    name: `ugs serve (${label})`,
    args: [
      ...SERVICE_NODE_FLAGS,
      ...profile,
      join(REPO, 'bin', 'ugs.js'),
      'serve',
      '--port',
      String(port),
      ...serveFlags(db),
    ],
    port,
    readyPath: '/readyz',
    cwd: REPO,
    env: serviceEnv(db),
  });
  return { ...service, release: defer(() => service.stop()) };
}

// The webhook-drain receiver is on loopback.
const serviceEnv = (db: BenchDatabase) =>
  childEnv({
    UGS_WEBHOOK_ALLOW_PRIVATE: 'true',
    ...(db.encryptionKey === undefined ? {} : { UGS_ENCRYPTION_KEY: db.encryptionKey }),
  });

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
  /** `written` of `groups` by this run, in `seconds` (a kept load resumed writes only the rest). */
  seed: {
    groups: number;
    written: number;
    kept: boolean;
    seconds: number;
    groupsPerSecond: number;
    batch: number;
    parallel: number;
  };
  /** Usage rows for usage-top-30d: the groups given rows by this run, and how long it took. */
  usage?: { groups: number; newGroups: number; seconds: number; since: string; until: string };
  responseBytes: number;
  ceiling: ScenarioResult;
  fastifyCeiling: ScenarioResult;
  scenarios: ScenarioResult[];
  /** The service's memory after its scenarios, split (bench/memory.ts); null where /proc is not there. */
  memory: MemoryBreakdown | null;
  usageCost?: UsageCost[];
  rulesCost?: RulesCost;
}

/** The server's CPU per response with usage counting on and off, window by window (docs/performance.md#usage-countings-cost). */
interface UsageCost {
  scenario: 'get-existing' | 'verify';
  /** Each window: which process counted (`a` or `b`), the CPU per response of each, and the counting one's write. */
  windows: UsageWindow[];
  /**
   * (CPU per response counting ÷ not − 1) × 100: per round, the geometric mean of its two windows'
   * ratios (each process counting in one); the median over the rounds. Null when a figure is missing.
   */
  costPercent: number | null;
  /**
   * Counting's own work per response as a share of the server's CPU per response with usage off, in
   * %: one count (`nsPerCount`) and the window's write divided among its responses; the median over
   * the windows. Measured apart from the load, so the machine's bursts do not reach it.
   */
  workPercent: number | null;
  nsPerCount: number;
}

interface UsageWindow {
  counting: 'a' | 'b';
  onCpuUs: number | null;
  offCpuUs: number | null;
  writeCpuUs: number | null;
}

/** The server's CPU per mint with 64 rules and with none, round by round. */
interface RulesCost {
  rounds: Array<{ rulesCpuUs: number | null; plainCpuUs: number | null }>;
  /** The median over the rounds of CPU per mint with rules ÷ without (inTurns); null when a figure is missing. */
  ratio: number | null;
}

const roundedUs = (us: number | null) => (us === null ? null : Math.round(us * 10) / 10);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * Two measurements of CPU per response compared in turns, `rounds` times, the one measured first
 * changing every round (the first of two may meet a machine the second does not), each round's pair
 * told to `onRound`. The comparison is the median over the rounds of a ÷ b: a window now and then
 * meets a burst of the machine's other work that its twin does not, and one such window moves a mean
 * by several percent (docs/performance-history.md, the first method).
 */
async function inTurns(
  rounds: number,
  measureA: () => Promise<number | null>,
  measureB: () => Promise<number | null>,
  onRound: (round: number, a: number | null, b: number | null) => void,
): Promise<{ pairs: Array<[number | null, number | null]>; medianRatio: number | null }> {
  const pairs: Array<[number | null, number | null]> = [];
  for (let round = 1; round <= rounds && !interrupted; round++) {
    const aFirst = round % 2 === 1;
    const first = await (aFirst ? measureA : measureB)();
    const second = await (aFirst ? measureB : measureA)();
    const [a, b] = (aFirst ? [first, second] : [second, first]).map(roundedUs) as [number | null, number | null];
    pairs.push([a, b]);
    onRound(round, a, b);
  }
  const ratios = pairs.flatMap(([a, b]) => (a === null || b === null ? [] : [a / b]));
  return { pairs, medianRatio: ratios.length > 0 && ratios.length === pairs.length ? median(ratios) : null };
}

/**
 * Usage counting's cost (docs/performance.md#usage-countings-cost): two processes of bench/usage-cost-host.ts on the block's database,
 * each a server of `ugs serve`'s own parts whose counting the bench switches, both on the last CPU and
 * loaded at the same time with the same requests, one counting and the other not. A window lasts
 * twice `ugs serve`'s interval between writes (each process has half the CPU), and each process's CPU
 * is read around it, the counting one's after the counts it made are written, so the write its
 * requests caused is in it. A round is two windows, each process counting in one of them: the
 * machine's bursts reach both processes of a window alike, and what makes one process dearer than
 * another of the same build is once on each side of a round. Besides the comparison, counting's own
 * work: a count, and the write measured with no load running.
 */
async function measureUsageCost(
  db: BenchDatabase,
  options: BenchOptions,
  data: ScenarioData,
  load: { connections: number; seconds: number; warmup: number },
): Promise<UsageCost[]> {
  const hosts = [await startUsageHost(db), await startUsageHost(db)] as const;
  const unpin = pinApart(hosts.map((host) => host.pid));
  try {
    const { nsPerCount } = JSON.parse((await hosts[0].ask('/count-cost')).toString()) as { nsPerCount: number };
    if (options.serverWarmup > 0)
      await Promise.all(
        hosts.map((host) => drive(host.port, getExisting(data).run(), options.connections, options.serverWarmup)),
      );
    const costs: UsageCost[] = [];
    for (const name of ['get-existing', 'verify'] as const) {
      const windows: UsageWindow[] = [];
      for (let round = 1; round <= options.usageCost && !interrupted; round++) {
        // Which process counts first changes every round.
        for (const counting of round % 2 === 1 ? [0, 1] : [1, 0])
          windows.push(await usageWindow(SCENARIO_FACTORIES[name](data), hosts, counting as 0 | 1, load));
        const [a, b] = windows.slice(-2);
        log(
          `  usage cost, ${name}, round ${round}: ${a!.onCpuUs ?? '–'} µs CPU each counting (its write ${a!.writeCpuUs ?? '–'} µs) beside ${a!.offCpuUs ?? '–'} µs not, then ${b!.onCpuUs ?? '–'} (${b!.writeCpuUs ?? '–'}) beside ${b!.offCpuUs ?? '–'}`,
        );
      }
      costs.push(usageCostOf(name, windows, nsPerCount));
    }
    return costs;
  } finally {
    unpin();
    await Promise.all(hosts.map((host) => host.stop()));
  }
}

interface UsageHost extends Child {
  ask(path: string): Promise<Buffer>;
}

async function startUsageHost(db: BenchDatabase): Promise<UsageHost> {
  const [controlPort, port] = [await freePort(), await freePort()];
  const host = await startNodeProcess({
    name: 'usage-cost host',
    args: [
      '--import',
      'tsx',
      join(REPO, 'bench', 'usage-cost-host.ts'),
      String(controlPort),
      String(port),
      '--',
      ...serveFlags(db),
      // The bench asks for every write itself (/flush), at the end of each window.
      '--usage-flush-ms',
      String(3_600_000),
    ],
    port: controlPort,
    readyPath: '/readyz',
    cwd: REPO,
    env: serviceEnv(db),
  });
  return { ...host, port, ask: async (path) => (await send(controlPort, 'GET', path)).body };
}

/** One window of `scenario` on both processes at once, `hosts[counting]` counting and the other not. */
async function usageWindow(
  scenario: Scenario,
  hosts: readonly [UsageHost, UsageHost],
  counting: 0 | 1,
  load: { connections: number; seconds: number; warmup: number },
): Promise<UsageWindow> {
  const on = hosts[counting];
  const off = hosts[1 - counting]!;
  await on.ask('/counting/on');
  await off.ask('/counting/off');
  const flush = async () => (JSON.parse((await on.ask('/flush')).toString()) as { cpuUs: number }).cpuUs;
  const both = <T>(run: (host: UsageHost) => Promise<T>) => Promise.all([run(on), run(off)]);
  if (load.warmup > 0) await both((host) => drive(host.port, scenario.warmup(), load.connections, load.warmup));
  // The warm-up's counts are written outside the window.
  await flush();
  const before = [on.cpuSeconds(), off.cpuSeconds()];
  // The processes share one CPU: a window of `ugs serve`'s interval between writes times their number
  // gives each the CPU time, and so the responses, of a server with the CPU to itself between two
  // writes, and the one write at its end is what that server would have written meanwhile.
  const window = { ...load, seconds: (hosts.length * DEFAULT_USAGE_FLUSH_MS) / 1000, warmup: 0 };
  const [onResponses, offResponses] = await both(
    async (host) => (await measure(host.port, scenario.run(), window)).responses,
  );
  const writeCpuUs = await flush();
  const after = [on.cpuSeconds(), off.cpuSeconds()];
  const perResponse = (index: 0 | 1, responses: number) => {
    const [start, end] = [before[index], after[index]];
    return start == null || end == null || responses === 0 ? null : roundedUs(((end - start) * 1e6) / responses);
  };
  return {
    counting: counting === 0 ? 'a' : 'b',
    onCpuUs: perResponse(0, onResponses),
    offCpuUs: perResponse(1, offResponses),
    writeCpuUs: onResponses > 0 ? roundedUs(writeCpuUs / onResponses) : null,
  };
}

/** A scenario's windows summed up: the comparison per round, and counting's own work. */
function usageCostOf(scenario: UsageCost['scenario'], windows: UsageWindow[], nsPerCount: number): UsageCost {
  const ratio = ({ onCpuUs, offCpuUs }: UsageWindow) =>
    onCpuUs === null || offCpuUs === null ? null : onCpuUs / offCpuUs;
  const rounds: number[] = [];
  for (let index = 0; index + 1 < windows.length; index += 2) {
    const [a, b] = [ratio(windows[index]!), ratio(windows[index + 1]!)];
    if (a !== null && b !== null) rounds.push(Math.sqrt(a * b));
  }
  const complete = rounds.length > 0 && rounds.length * 2 === windows.length;
  const costPercent = complete ? Math.round((median(rounds) - 1) * 1000) / 10 : null;
  const shares = windows.flatMap(({ offCpuUs, writeCpuUs }) =>
    offCpuUs === null || writeCpuUs === null ? [] : [(nsPerCount / 1000 + writeCpuUs) / offCpuUs],
  );
  const workPercent =
    shares.length > 0 && shares.length === windows.length ? Math.round(median(shares) * 1000) / 10 : null;
  log(
    `  usage cost, ${scenario}: ${costPercent ?? '–'} % CPU per response (the median of its rounds); counting's own work ${workPercent ?? '–'} % (a count ${nsPerCount} ns, and the write)`,
  );
  return { scenario, windows, costPercent, workPercent, nsPerCount };
}

/**
 * Minting with 64 short rules against minting with none: embed-token-rules and
 * embed-token on the block's own service, in turns.
 */
async function measureRulesCost(
  service: Child,
  options: BenchOptions,
  data: ScenarioData,
  load: { connections: number; seconds: number; warmup: number },
): Promise<RulesCost> {
  const cpuUs = async (name: 'embed-token' | 'embed-token-rules') => {
    const scenario = SCENARIO_FACTORIES[name](data);
    const figures = await measure(
      service.port,
      scenario.run(),
      { ...load, serverCpuSeconds: service.cpuSeconds },
      scenario.warmup(),
    );
    return figures.cpuUsPerResponse;
  };
  const { pairs, medianRatio } = await inTurns(
    options.rulesCost,
    () => cpuUs('embed-token-rules'),
    () => cpuUs('embed-token'),
    (round, rules, plain) =>
      log(`  rules cost, round ${round}: ${rules ?? '–'} µs CPU per mint with 64 rules, ${plain ?? '–'} µs with none`),
  );
  const ratio = medianRatio === null ? null : Math.round(medianRatio * 100) / 100;
  log(`  rules cost: ${ratio ?? '–'} × the CPU per mint with 64 rules, the median of ${pairs.length} rounds`);
  return { rounds: pairs.map(([rulesCpuUs, plainCpuUs]) => ({ rulesCpuUs, plainCpuUs })), ratio };
}

/**
 * The scenarios to run, in run order: offline-verify-repeated brings verify, whose rate it is compared
 * with. None that changes the groups on a kept database, which the next run must find as loaded.
 */
function scenarioNames(options: BenchOptions, kept: boolean): ScenarioName[] {
  const wanted = new Set(options.scenarios);
  if (wanted.has('offline-verify-repeated')) wanted.add('verify');
  const skipped = kept ? MUTATING.filter((name) => wanted.has(name)) : [];
  if (skipped.length > 0) log(`  kept database: skipping ${skipped.join(', ')}, which would change its groups`);
  return SCENARIOS.filter((name) => wanted.has(name) && !skipped.includes(name));
}

/** The cursor of page `page` of the admin list (100 groups a page), walked to from the first; or of the last page, if fewer. */
async function walkToPage(port: number, seeded: Seeded, page: number): Promise<{ page: number; cursor: string }> {
  let reached = { page: 1, cursor: '' };
  while (reached.page < page) {
    const path = `/api/admin/user_groups${reached.cursor ? `?cursor=${encodeURIComponent(reached.cursor)}` : ''}`;
    const reply = await send(port, 'GET', path, { authorization: `Token ${seeded.adminToken}` });
    if (reply.status !== 200)
      throw new Error(`${path} answered ${reply.status}: ${reply.body.toString().slice(0, 300)}`);
    const next = (JSON.parse(reply.body.toString()) as { next_cursor: string | null }).next_cursor;
    if (next === null) break;
    reached = { page: reached.page + 1, cursor: next };
  }
  return reached;
}

async function runBlock(engine: Engine, size: number, options: BenchOptions, rows: Row[]): Promise<BlockResult> {
  const label = `${engine}-${size}`;
  log(`\n== ${engine}, ${size.toLocaleString('en-US')} groups`);
  const kept = options.keep || size > KEPT_ABOVE;
  const keeping = { keep: kept, fresh: options.fresh, sideDir: KEPT_DIR };
  const db =
    engine === 'sqlite'
      ? sqliteDatabase(kept ? KEPT_DIR : DATA_DIR, size, keeping)
      : await postgresDatabase(options.postgresUrl, size, keeping);
  const dropDatabase = defer(() => db.drop());
  log(`  database: ${db.describe}`);

  const seeded = await seed(db, size, {
    batch: options.seedBatch,
    parallel: options.seedParallel,
    sample: options.sample,
    nested: options.scenarios.includes('get-nested'),
    ruled: options.scenarios.includes('embed-token-rules') || options.rulesCost > 0,
    asLoaded: options.asLoaded && kept,
  });
  if (seeded.groups < size) log(`  as loaded: ${seeded.groups.toLocaleString('en-US')} groups there`);
  const groupsPerSecond = seeded.written === 0 ? 0 : Math.round(seeded.written / seeded.seconds);
  log(
    `  seeding: ${seeded.written.toLocaleString('en-US')} groups${seeded.written < seeded.groups ? ` (the other ${(seeded.groups - seeded.written).toLocaleString('en-US')} were there)` : ''} in ${seeded.seconds.toFixed(1)} s (${groupsPerSecond.toLocaleString('en-US')} groups/s)`,
  );
  let usage: BlockResult['usage'];
  if (options.scenarios.includes('usage-top-30d')) {
    const groups = Math.min(size, options.usageGroups);
    const usageStarted = performance.now();
    const newGroups = await db.seedUsage(groups, log);
    const seconds = Math.round((performance.now() - usageStarted) / 100) / 10;
    const since = new Date(Date.parse(db.usageUntil) - 29 * 86_400_000).toISOString().slice(0, 10);
    usage = { groups, newGroups, seconds, since, until: db.usageUntil };
    log(
      `  usage rows: ${groups.toLocaleString('en-US')} groups, three days each from ${since} to ${db.usageUntil} (${newGroups.toLocaleString('en-US')} given rows now, ${seconds} s)`,
    );
  }
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
  const data: ScenarioData = {
    seeded,
    createPrefix: `new-${RUN_ID}-`,
    ...(usage ? { usageRange: { since: usage.since, until: usage.until } } : {}),
  };
  const names = scenarioNames(options, kept);
  if (options.scenarios.includes('embed-token-verify')) {
    data.embedTokens = await mintTokens(service.port, seeded, EMBED_VERIFY_TOKENS);
    log(`  embed-token-verify: ${data.embedTokens.length} embed tokens minted`);
  }

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
  for (const name of names) {
    if (interrupted) break;
    // Walked to just before: its thousand pages of full groups grow the heap, whose RSS the scenarios before it report.
    if (name === 'admin-page-1000') {
      const walkStarted = performance.now();
      data.pageCursor = await walkToPage(service.port, seeded, CURSOR_PAGE);
      log(
        `  admin-page-1000: walked to page ${data.pageCursor.page} in ${((performance.now() - walkStarted) / 1000).toFixed(1)} s`,
      );
    }
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
        { ...load, serverCpuSeconds: service.cpuSeconds, databaseCpu: db.databaseCpu },
        scenario.warmup(),
      );
    } else if (isAdmin(name)) {
      const requests = ADMIN_REQUESTS[name](data);
      figures = await measureOneAtATime(service.port, requests.paths, seeded.adminToken, {
        seconds: options.duration,
        warmup: options.warmup,
        serverCpuSeconds: service.cpuSeconds,
        databaseCpu: db.databaseCpu,
      });
      describe = requests.describe;
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
      const revocationsName = 'offline-verify (revocations)';
      rows.push(
        row(engine, size, revocationsName, measured.withRevocations, measured.verifier.okPerSecond, null, null),
      );
      scenarios.push({
        scenario: revocationsName,
        describe: OFFLINE_VERIFY_REVOCATIONS,
        figures: measured.withRevocations,
        rssMb: null,
        ratioToCeiling: measured.withRevocations.okPerSecond / measured.verifier.okPerSecond,
        ratioTo: 'offline-verify',
      });
      log(
        `  ${revocationsName}: ${Math.round(measured.withRevocations.okPerSecond)} verifications/s, × ${(measured.withRevocations.okPerSecond / measured.verifier.okPerSecond).toFixed(2)} the verifier without it`,
      );
      figures = measured.verifier;
      describe = OFFLINE_VERIFY;
      ratioTo = { name: ceilingName, perSecond: cryptoPerSecond };
    } else if (name === 'sync-10k') {
      figures = await measureSync10k(service.port, seeded, log);
      describe = SYNC_10K;
    } else if (name === 'sync-prune-10k') {
      figures = await measureSyncPrune10k(service.port, seeded, log);
      describe = SYNC_PRUNE_10K;
    } else {
      figures = await measureOfflineVerifyRepeated(service.port, seeded, load);
      describe = OFFLINE_VERIFY_REPEATED;
      ratioTo = { name: 'verify', perSecond: perSecond.get('verify') ?? 0 };
    }
    perSecond.set(name, figures.okPerSecond);
    const rssMb = service.rssMb();
    // The admin paths, one request at a time, make no like-for-like ratio.
    const alone = isAdmin(name);
    const result = row(
      engine,
      size,
      name,
      figures,
      alone ? null : (ratioTo?.perSecond ?? ceilingPerSecond),
      ratioTo || alone ? null : fastifyPerSecond,
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
        `${figures.errors.wrongOutcome ? `, ${figures.errors.wrongOutcome} wrong outcomes` : ''}), ×${result.ratioToCeiling ?? '–'}${ratioTo ? ` (of ${ratioTo.name})` : ` node:http, ×${result.ratioToFastify ?? '–'} Fastify`}, ${result.cpuUs ?? '–'} µs CPU each${result.databaseCpuUs === null ? '' : ` (+${result.databaseCpuUs} µs in PostgreSQL's backends)`}, RSS ${rssMb ?? '?'} MB`,
    );
  }

  const memory = await memoryBreakdownOf(service.pid, service.port);
  if (memory) log(`  memory after the scenarios: ${describeMemory(memory)}`);

  const rulesCost =
    options.rulesCost > 0 && !interrupted ? await measureRulesCost(service, options, data, load) : undefined;
  const usageCost = options.usageCost > 0 && !interrupted ? await measureUsageCost(db, options, data, load) : undefined;

  await service.release();
  await dropDatabase();
  return {
    engine,
    size,
    database: db.describe,
    seed: {
      groups: seeded.groups,
      written: seeded.written,
      kept,
      seconds: Math.round(seeded.seconds * 10) / 10,
      groupsPerSecond,
      batch: seeded.batch,
      parallel: engine === 'postgres' ? options.seedParallel : 1,
    },
    ...(usage ? { usage } : {}),
    responseBytes,
    ceiling,
    fastifyCeiling,
    scenarios,
    memory,
    ...(usageCost ? { usageCost } : {}),
    ...(rulesCost ? { rulesCost } : {}),
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
        `usage counting, ${block.engine} ${block.size.toLocaleString('en-US')}, ${cost.scenario}: ${cost.costPercent ?? '–'} % server CPU per response, the median of its rounds; its own work ${cost.workPercent ?? '–'} % ` +
          `(on/off µs: ${cost.windows.map((w) => `${w.onCpuUs ?? '–'}/${w.offCpuUs ?? '–'}`).join(', ')})\n`,
      );
    if (block.rulesCost)
      process.stdout.write(
        `minting with 64 rules, ${block.engine} ${block.size.toLocaleString('en-US')}: ${block.rulesCost.ratio ?? '–'} × the server CPU per mint with none, the median of its rounds ` +
          `(rules/none µs: ${block.rulesCost.rounds.map((r) => `${r.rulesCpuUs ?? '–'}/${r.plainCpuUs ?? '–'}`).join(', ')})\n`,
      );
    process.stdout.write(
      `seeding ${block.engine} ${block.size.toLocaleString('en-US')}: ${block.seed.written < block.seed.groups ? `${block.seed.written.toLocaleString('en-US')} written (kept load resumed), ` : ''}${block.seed.seconds} s (${block.seed.groupsPerSecond.toLocaleString('en-US')} groups/s)\n`,
    );
    if (block.usage)
      process.stdout.write(
        `usage rows ${block.engine} ${block.size.toLocaleString('en-US')}: ${block.usage.groups.toLocaleString('en-US')} groups × 3 days (${block.usage.since} to ${block.usage.until}); ${block.usage.newGroups.toLocaleString('en-US')} given rows in ${block.usage.seconds} s\n`,
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
