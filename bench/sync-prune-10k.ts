// A prune at the sync's bound (docs/api.md#sync-tenants-as-code): 10 000 tagged groups (1 000 roots, nine children each) that
// a file leaves out, planned (dry run) and then deleted by one sync over HTTP. While each phase runs,
// the bench process asks /healthz one request after another: its latencies show how long the sync
// holds the service's event loop (the plan yields between its reads).
import { randomBytes } from 'node:crypto';
import { concurrentFigures, sync, SYNC_GROUPS } from './sync-10k.js';
import type { LoadFigures } from './wrk.js';
import type { Seeded } from './seed.js';

export interface SyncPrunePhases {
  setupSeconds: number;
  planSeconds: number;
  applySeconds: number;
}

const ROOTS = SYNC_GROUPS / 10;

/** Health checks one at a time until `done` settles; their latencies and status codes. */
async function healthWhile(port: number, done: Promise<unknown>) {
  let running = true;
  void done.finally(() => (running = false)).catch(() => undefined);
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  while (running) {
    const started = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/healthz`);
    await response.arrayBuffer();
    latencies.push(performance.now() - started);
    statusCodes[response.status] = (statusCodes[response.status] ?? 0) + 1;
  }
  return { latencies, statusCodes };
}

export async function measureSyncPrune10k(
  port: number,
  seeded: Seeded,
  log: (message: string) => void,
): Promise<LoadFigures & { phases: SyncPrunePhases }> {
  const prefix = `prune-${randomBytes(4).toString('hex')}`;
  const tag = prefix;
  const body = Array.from({ length: SYNC_GROUPS }, (_, i) =>
    JSON.stringify({
      user_group_id: `${prefix}-${i}`,
      name: `Pruned customer ${i}`,
      properties: { plan: i % 3 === 0 ? 'pro' : 'free', seats: i % 50 },
      tags: [tag],
      ...(i < ROOTS ? {} : { parent_user_group_id: `${prefix}-${i % ROOTS}` }),
    }),
  ).join('\n');
  const setup = await sync(port, seeded.adminToken, body, false);
  if (setup.summary.create !== SYNC_GROUPS) throw new Error(`the setup should create ${SYNC_GROUPS} groups`);

  // The file leaves every one of them out: the prune deletes the 10 000, children first.
  const pruneAll = (dryRun: boolean) => sync(port, seeded.adminToken, '[]', dryRun, { prune: tag, array: true });
  const planning = pruneAll(true);
  const duringPlan = await healthWhile(port, planning);
  const plan = await planning;
  if (plan.summary.delete !== SYNC_GROUPS) throw new Error(`the plan should delete ${SYNC_GROUPS} groups`);
  const applying = pruneAll(false);
  const duringApply = await healthWhile(port, applying);
  const apply = await applying;
  if (apply.summary.delete !== SYNC_GROUPS) throw new Error(`the apply should delete ${SYNC_GROUPS} groups`);

  const phases = {
    setupSeconds: Math.round(setup.seconds * 100) / 100,
    planSeconds: Math.round(plan.seconds * 100) / 100,
    applySeconds: Math.round(apply.seconds * 100) / 100,
  };
  const latencies = [...duringPlan.latencies, ...duringApply.latencies];
  const statusCodes: Record<string, number> = {};
  for (const codes of [duringPlan.statusCodes, duringApply.statusCodes])
    for (const [code, count] of Object.entries(codes)) statusCodes[code] = (statusCodes[code] ?? 0) + count;
  const slowest = (values: number[]) => Math.round(Math.max(0, ...values));
  log(
    `  sync-prune-10k: setup ${phases.setupSeconds} s, plan ${phases.planSeconds} s, apply ${phases.applySeconds} s; /healthz answered ${duringPlan.latencies.length} times during the plan (max ${slowest(duringPlan.latencies)} ms), ${duringApply.latencies.length} during the apply (max ${slowest(duringApply.latencies)} ms)`,
  );
  return { phases, ...concurrentFigures(latencies, statusCodes, plan.seconds + apply.seconds) };
}
