// Two builds of `ugs serve` compared on one seeded database, both loaded at once with the same requests
// (each server its own wrk, half the connections each), so that whatever else the machine does weighs
// on both alike: on a shared machine, runs one after the other drift more than a small change costs.
// Prints, per round and scenario, each server's CPU per response (/proc) and their ratio, then the
// median ratio per scenario. See bench/README.md ("Comparing two builds").
//
//   node --import tsx bench/ab-builds.ts --before DIR --after DIR [--engine sqlite] [--rounds 7]
//     [--seconds 5] [--scenarios get-existing,verify,embed-token-verify,embed-token]
//     [--before-node-flags "…"] [--after-node-flags "--max-semi-space-size=16"]
//
// DIR: a copy of `dist` as `npm run build` left it for that build.
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { postgresDatabase, sqliteDatabase } from './databases.js';
import { mintTokens } from './offline-verify.js';
import { DEFAULT_POSTGRES_URL } from './options.js';
import { freePort, pinApart, startNodeProcess, type Child } from './processes.js';
import { SCENARIO_FACTORIES, type ScenarioData } from './scenarios.js';
import { seed } from './seed.js';
import { drive, ensureWrk, measure } from './wrk.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const SIZE = 10_000;
const CONNECTIONS_EACH = 32;
const BUILDS = ['before', 'after'] as const;
type Build = (typeof BUILDS)[number];

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    after: { type: 'string' },
    engine: { type: 'string', default: 'sqlite' },
    rounds: { type: 'string', default: '7' },
    seconds: { type: 'string', default: '5' },
    scenarios: { type: 'string', default: 'get-existing,verify,embed-token-verify,embed-token' },
    // Node's own flags for one build's server (space-separated), e.g. the same dist twice with
    // --after-node-flags=--max-semi-space-size=16 to price a V8 setting.
    'before-node-flags': { type: 'string', default: '' },
    'after-node-flags': { type: 'string', default: '' },
  },
});
if (!values.before || !values.after) throw new Error('--before DIR and --after DIR (copies of dist) are required');
const scenarios = values.scenarios!.split(',') as Array<keyof typeof SCENARIO_FACTORIES>;
for (const name of scenarios) if (!SCENARIO_FACTORIES[name]) throw new Error(`unknown scenario ${name}`);
const log = (message: string) => process.stderr.write(`${message}\n`);
const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** A directory `ugs serve` runs from: bin and package.json of this checkout, the build's dist, our node_modules. */
function serverRoot(scratch: string, build: Build, dist: string): string {
  const dir = join(scratch, build);
  mkdirSync(join(dir, 'bin'), { recursive: true });
  cpSync(join(REPO, 'bin', 'ugs.js'), join(dir, 'bin', 'ugs.js'));
  cpSync(join(REPO, 'package.json'), join(dir, 'package.json'));
  cpSync(dist, join(dir, 'dist'), { recursive: true });
  if (!existsSync(join(dir, 'node_modules'))) symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

ensureWrk();
const scratch = mkdtempSync(join(tmpdir(), 'ugs-ab-'));
const db =
  values.engine === 'postgres'
    ? await postgresDatabase(process.env.UGS_BENCH_POSTGRES_URL ?? DEFAULT_POSTGRES_URL, SIZE)
    : sqliteDatabase(join(REPO, 'bench', '.data', `ab-${process.pid}`), SIZE);
const services: Partial<Record<Build, Child>> = {};
try {
  const seeded = await seed(db, SIZE, { batch: 5000, parallel: 8, sample: 50_000, nested: false, ruled: false });
  await db.analyze();
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('UGS_'))),
    NODE_ENV: 'production',
    ...(db.encryptionKey === undefined ? {} : { UGS_ENCRYPTION_KEY: db.encryptionKey }),
  };
  for (const build of BUILDS) {
    const dir = serverRoot(scratch, build, values[build]!);
    const port = await freePort();
    services[build] = await startNodeProcess({
      name: `ugs serve (${build})`,
      // One public URL for both: an embed token minted by one verifies on the other (same issuer).
      args: [
        ...values[`${build}-node-flags`]!.split(' ').filter((flag) => flag !== ''),
        ...[join(dir, 'bin', 'ugs.js'), 'serve', '--port', String(port), '--host', '127.0.0.1'],
        ...['--database', db.url, '--log-level', 'warn', '--public-url', 'http://127.0.0.1:8080'],
        ...['--rate-limit', '1000000/s', '--workers', '1'],
      ],
      port,
      readyPath: '/readyz',
      cwd: dir,
      env,
    });
  }
  // Both servers on the last CPU, the load generators on the others: each server then gets half of
  // one core whatever else the machine runs, and batches alike (unpinned, a starved server answers
  // more responses per wake-up and looks cheaper, and single rounds ranged 0.7–1.8).
  const unpin = pinApart(BUILDS.map((build) => services[build]!.pid));
  const both = <T>(work: (service: Child) => Promise<T>) => Promise.all(BUILDS.map((build) => work(services[build]!)));
  const data: ScenarioData = { seeded, createPrefix: 'ab-' };
  if (scenarios.includes('embed-token-verify')) data.embedTokens = await mintTokens(services.after!.port, seeded, 1000);
  await both((service) => drive(service.port, SCENARIO_FACTORIES['get-existing'](data).run(), CONNECTIONS_EACH, 5));
  const ratios = new Map<string, number[]>();
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const name of scenarios) {
      const scenario = SCENARIO_FACTORIES[name](data);
      const load = { connections: CONNECTIONS_EACH, seconds: Number(values.seconds), warmup: 1 };
      const [before, after] = await both((service) =>
        measure(service.port, scenario.run(), { ...load, serverCpuSeconds: service.cpuSeconds }),
      );
      const ratio = after!.cpuUsPerResponse! / before!.cpuUsPerResponse!;
      ratios.set(name, [...(ratios.get(name) ?? []), ratio]);
      log(
        `${values.engine} round ${round} ${name}: before ${before!.cpuUsPerResponse} µs (errors ${before!.errors.total}), after ${after!.cpuUsPerResponse} µs (errors ${after!.errors.total}), after ÷ before ${ratio.toFixed(3)}`,
      );
    }
  }
  for (const [name, xs] of ratios)
    log(
      `${values.engine} ${name}: after ÷ before ${median(xs).toFixed(3)}, the median of ${xs.length} rounds (${xs.map((x) => x.toFixed(2)).join(', ')})`,
    );
  unpin();
} finally {
  for (const service of Object.values(services)) await service.stop();
  await db.drop();
  rmSync(scratch, { recursive: true, force: true });
  rmSync(join(REPO, 'bench', '.data', `ab-${process.pid}`), { recursive: true, force: true });
}
