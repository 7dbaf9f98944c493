import { parseArgs } from 'node:util';

export const ENGINES = ['sqlite', 'postgres'] as const;
export type Engine = (typeof ENGINES)[number];

/**
 * Run order: verify and embed-token-verify before rotate (rotate retires the tokens they use, and
 * with them the embed tokens minted before), create last (it grows the
 * table); offline-verify-repeated after verify, whose rate it is compared with (and which it brings).
 */
/** The admin paths, asked one request at a time (one-at-a-time.ts). */
export const ADMIN = [
  'admin-search-prefix',
  'admin-search-name',
  'admin-tag-filter',
  'admin-page-1000',
  'admin-group-audit',
  'usage-top-30d',
] as const;

export const SCENARIOS = [
  'get-existing',
  'get-nested',
  'verify',
  'embed-token-verify',
  'update',
  'rotate',
  'create',
  'embed-token',
  'embed-token-rules',
  'offline-verify',
  'offline-verify-repeated',
  'webhook-drain',
  'sync-10k',
  'sync-prune-10k',
  ...ADMIN,
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** Scenarios that change the seeded groups (or add to them): never run on a kept database, whose next run must find it as loaded. */
export const MUTATING: readonly ScenarioName[] = [
  'update',
  'rotate',
  'create',
  'webhook-drain',
  'sync-10k',
  'sync-prune-10k',
];

/** Sizes above this are kept between runs and loaded resumably without `--keep`. */
export const KEPT_ABOVE = 1_000_000;
/** Groups given usage rows for usage-top-30d, at most (all of them below). */
export const USAGE_GROUPS = 1_000_000;

export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

export interface BenchOptions {
  engines: Engine[];
  sizes: number[];
  /** Seconds each measured scenario runs (the ceiling included). */
  duration: number;
  /** Seconds of unrecorded load before each measurement, so the JIT and caches are warm. */
  warmup: number;
  /**
   * Seconds of unrecorded get-existing load on a freshly started service before anything is
   * measured: V8 needs some ten thousand requests before the read path runs optimised code.
   */
  serverWarmup: number;
  connections: number;
  scenarios: ScenarioName[];
  quick: boolean;
  postgresUrl: string;
  /** Groups per applyUserGroupWrites call (one transaction each). */
  seedBatch: number;
  /** Batches written at once on PostgreSQL (SQLite writes one at a time: it has one writer). */
  seedParallel: number;
  /** How many seeded groups (ids and tokens) the scenarios rotate over. */
  sample: number;
  /**
   * Keep every size's database between runs and continue its load where it stopped (sizes above
   * KEPT_ABOVE are kept whatever this says).
   */
  keep: boolean;
  /** Start a kept database over: drop it and load it from nothing. */
  fresh: boolean;
  /** Measure a kept database as far as its load got, writing no groups (the sample from the batches there). */
  asLoaded: boolean;
  /** Groups that get usage rows (three days each in 30) when usage-top-30d runs; at most the size. */
  usageGroups: number;
  /** Start the service under `node --cpu-prof` and keep the profiles in bench/profiles/. */
  cpuProf: boolean;
  /** PostgreSQL: skip the ANALYZE after seeding, to measure tables without statistics (autovacuum off). */
  noAnalyze: boolean;
  /**
   * Rounds of the usage-counting cost (docs/performance.md#usage-countings-cost): get-existing and verify against two servers in
   * one process, one counting and one not, in turns; 0: not measured.
   */
  usageCost: number;
  /** Rounds of embed-token and embed-token-rules in turns on the block's service; 0: not measured. */
  rulesCost: number;
}

export const USAGE = `Usage: npm run bench -- [flags]

  --engines sqlite,postgres   engines to measure (default: both)
  --sizes 10000,1000000       seeded groups per database (default: both; 100k, 1M, 10M also read)
  --duration 10               seconds per scenario, the ceilings included (default 10; below 10 is a smoke run)
  --warmup 2                  seconds of unrecorded load before each measurement (default 2; 0: none)
  --server-warmup 10          seconds of unrecorded get-existing load on each fresh service first (default 10)
  --connections 64            concurrent keep-alive connections (default 64)
  --scenarios a,b             any of ${SCENARIOS.join(', ')} (default: all; the ceilings always run)
  --quick                     smoke run: sizes 10000, duration 3, warmup 1, server warmup 5 (explicit flags still win)
  --seed-batch 5000           groups per store transaction while seeding (default 5000)
  --seed-parallel 8           PostgreSQL seeding transactions in flight (default 8)
  --sample 50000              seeded groups the scenarios rotate over (default 50000)
  --keep                      keep each size's database (PostgreSQL schema bench_scale_<size>, SQLite
                              bench/.data/scale/) between runs and continue its load where it stopped;
                              always so above ${KEPT_ABOVE.toLocaleString('en-US')} groups. Scenarios that change groups are skipped there
  --fresh                     drop a kept database first and load it from nothing
  --as-loaded                 measure a kept database as far as its load got, writing no groups (the sample drawn
                              from the groups there)
  --usage-groups 1000000      groups given usage rows for usage-top-30d (default ${USAGE_GROUPS.toLocaleString('en-US')}, at most the size)
  --cpu-prof                  run the service under node --cpu-prof; profiles go to bench/profiles/
  --no-analyze                PostgreSQL: no ANALYZE after seeding (ugs serve then analyses the stale tables at start)
  --usage-cost 5              rounds comparing the server's CPU per response of get-existing and verify with usage
                              counting on and off (two processes loaded at once, each counting in one window of a
                              round); 0: not measured (default 0)
  --rules-cost 5              rounds of embed-token and embed-token-rules in turns, comparing the server's CPU per
                              mint with 64 rules and with none; 0: not measured (default 0)
  --help

Environment: UGS_BENCH_POSTGRES_URL (default ${DEFAULT_POSTGRES_URL}).`;

function list<T extends string>(value: string, allowed: readonly T[], flag: string): T[] {
  const items = value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  for (const item of items) {
    if (!allowed.includes(item as T)) throw new Error(`--${flag}: "${item}" is not one of ${allowed.join(', ')}`);
  }
  if (items.length === 0) throw new Error(`--${flag} needs at least one value`);
  return [...new Set(items as T[])];
}

function positive(value: string, flag: string, { integer = true, min = 1 } = {}): number {
  const number = Number(value.replace(/_/g, ''));
  if (!Number.isFinite(number) || number < min || (integer && !Number.isInteger(number))) {
    throw new Error(`--${flag} must be ${integer ? 'a whole number' : 'a number'} of at least ${min}, got "${value}"`);
  }
  return number;
}

/** `100k`, `1M`, `10M` as the numbers they stand for; anything else as written. */
function withSuffix(value: string): string {
  const match = /^\s*([\d_.]+)\s*([kKmM])\s*$/.exec(value);
  if (!match) return value;
  return String(Number(match[1]!.replace(/_/g, '')) * (match[2]!.toLowerCase() === 'k' ? 1e3 : 1e6));
}

export function parseOptions(argv: string[]): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      engines: { type: 'string' },
      sizes: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      'server-warmup': { type: 'string' },
      connections: { type: 'string' },
      scenarios: { type: 'string' },
      quick: { type: 'boolean', default: false },
      'seed-batch': { type: 'string' },
      'seed-parallel': { type: 'string' },
      sample: { type: 'string' },
      keep: { type: 'boolean', default: false },
      fresh: { type: 'boolean', default: false },
      'as-loaded': { type: 'boolean', default: false },
      'usage-groups': { type: 'string' },
      'cpu-prof': { type: 'boolean', default: false },
      'no-analyze': { type: 'boolean', default: false },
      'usage-cost': { type: 'string' },
      'rules-cost': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return 'help';
  const quick = values.quick === true;
  const sizes =
    values.sizes === undefined
      ? quick
        ? [10_000]
        : [10_000, 1_000_000]
      : values.sizes.split(',').map((size) => positive(withSuffix(size), 'sizes', { min: 1000 }));
  return {
    engines: values.engines === undefined ? [...ENGINES] : list(values.engines, ENGINES, 'engines'),
    sizes: [...new Set(sizes)],
    duration: values.duration === undefined ? (quick ? 3 : 10) : positive(values.duration, 'duration'),
    warmup: values.warmup === undefined ? (quick ? 1 : 2) : positive(values.warmup, 'warmup', { min: 0 }),
    serverWarmup:
      values['server-warmup'] === undefined
        ? quick
          ? 5
          : 10
        : positive(values['server-warmup'], 'server-warmup', { min: 0 }),
    connections: values.connections === undefined ? 64 : positive(values.connections, 'connections'),
    // Always in run order, whatever order the flag lists them in.
    scenarios:
      values.scenarios === undefined
        ? [...SCENARIOS]
        : SCENARIOS.filter((name) => list(values.scenarios!, SCENARIOS, 'scenarios').includes(name)),
    quick,
    postgresUrl: process.env.UGS_BENCH_POSTGRES_URL || DEFAULT_POSTGRES_URL,
    seedBatch: values['seed-batch'] === undefined ? 5000 : positive(values['seed-batch'], 'seed-batch'),
    seedParallel: values['seed-parallel'] === undefined ? 8 : positive(values['seed-parallel'], 'seed-parallel'),
    sample: values.sample === undefined ? 50_000 : positive(values.sample, 'sample', { min: 100 }),
    keep: values.keep === true,
    fresh: values.fresh === true,
    asLoaded: values['as-loaded'] === true,
    usageGroups: values['usage-groups'] === undefined ? USAGE_GROUPS : positive(values['usage-groups'], 'usage-groups'),
    cpuProf: values['cpu-prof'] === true,
    noAnalyze: values['no-analyze'] === true,
    usageCost: values['usage-cost'] === undefined ? 0 : positive(values['usage-cost'], 'usage-cost', { min: 0 }),
    rulesCost: values['rules-cost'] === undefined ? 0 : positive(values['rules-cost'], 'rules-cost', { min: 0 }),
  };
}
