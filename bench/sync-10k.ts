// Tenants as code at scale (docs/api.md#sync-tenants-as-code): plan and apply a sync of 10 000 new groups against
// the running service over HTTP, then plan the same file again (nothing to do). While the apply runs,
// a writer in the bench process renames a seeded group over and over: its latencies show how long
// other writers wait for the sync's transaction (none may be answered 503).
import { randomBytes } from 'node:crypto';
import { latencyFigures, type LoadFigures } from './wrk.js';
import type { Seeded } from './seed.js';

export const SYNC_GROUPS = 10_000;

/** The sync's targets on this machine. */
export const SYNC_TARGETS = { planSeconds: 2, applySeconds: 10 };

export interface SyncPhases {
  planSeconds: number;
  applySeconds: number;
  noopPlanSeconds: number;
}

export async function sync(
  port: number,
  token: string,
  body: string,
  dryRun: boolean,
  { prune, array = false }: { prune?: string; array?: boolean } = {},
): Promise<{ seconds: number; summary: Record<string, number> }> {
  const query = new URLSearchParams({ ...(dryRun ? { dry_run: 'true' } : {}), ...(prune ? { prune } : {}) });
  const started = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}/api/admin/user_groups/sync?${query}`, {
    method: 'POST',
    headers: { 'content-type': array ? 'application/json' : 'application/x-ndjson', authorization: `Token ${token}` },
    body,
  });
  const text = await response.text();
  const seconds = (performance.now() - started) / 1000;
  if (response.status !== 200) throw new Error(`sync answered ${response.status}: ${text.slice(0, 500)}`);
  return { seconds, summary: (JSON.parse(text) as { sync: { summary: Record<string, number> } }).sync.summary };
}

/**
 * The three phases' seconds (printed and recorded), and as figures the renames made during the apply:
 * their latencies and status codes.
 */
export async function measureSync10k(
  port: number,
  seeded: Seeded,
  log: (message: string) => void,
): Promise<LoadFigures & { phases: SyncPhases }> {
  const prefix = `sync-${randomBytes(4).toString('hex')}`;
  const body = Array.from({ length: SYNC_GROUPS }, (_, i) =>
    JSON.stringify({
      user_group_id: `${prefix}-${i}`,
      name: `Synced customer ${i}`,
      properties: { plan: i % 3 === 0 ? 'pro' : 'free', seats: i % 50 },
      mapping: seeded.mappingInput,
      tags: ['fleet'],
    }),
  ).join('\n');

  const plan = await sync(port, seeded.adminToken, body, true);
  if (plan.summary.create !== SYNC_GROUPS) throw new Error(`the plan should create ${SYNC_GROUPS} groups`);

  // The concurrent writer: renames, one at a time, for as long as the apply runs.
  let applying = true;
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  const writer = (async () => {
    for (let n = 0; applying; n += 1) {
      const started = performance.now();
      const response = await fetch(`http://127.0.0.1:${port}/api/user`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Token ${seeded.apiToken}` },
        body: JSON.stringify({ user_group_id: seeded.ids[0], name: `renamed during sync ${n}` }),
      });
      await response.arrayBuffer();
      latencies.push(performance.now() - started);
      statusCodes[response.status] = (statusCodes[response.status] ?? 0) + 1;
    }
  })();
  const apply = await sync(port, seeded.adminToken, body, false).finally(() => (applying = false));
  await writer;
  if (apply.summary.create !== SYNC_GROUPS) throw new Error(`the apply should create ${SYNC_GROUPS} groups`);

  const noop = await sync(port, seeded.adminToken, body, true);
  if (noop.summary.unchanged !== SYNC_GROUPS) throw new Error('a second plan of the same file should change nothing');

  const phases = {
    planSeconds: Math.round(plan.seconds * 100) / 100,
    applySeconds: Math.round(apply.seconds * 100) / 100,
    noopPlanSeconds: Math.round(noop.seconds * 100) / 100,
  };
  log(
    `  sync-10k: plan ${phases.planSeconds} s (target ≤ ${SYNC_TARGETS.planSeconds}), apply ${phases.applySeconds} s (target ≤ ${SYNC_TARGETS.applySeconds}), no-op plan ${phases.noopPlanSeconds} s; ${latencies.length} renames meanwhile, max ${Math.round(Math.max(0, ...latencies))} ms`,
  );
  return { phases, ...concurrentFigures(latencies, statusCodes, apply.seconds), seconds: phases.applySeconds };
}

/** The figures of the requests made one at a time while a sync ran: latencies and status codes. */
export function concurrentFigures(
  latencies: number[],
  statusCodes: Record<string, number>,
  seconds: number,
): LoadFigures {
  const ok = statusCodes[200] ?? 0;
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    seconds,
    responses: latencies.length,
    ok,
    okPerSecond: ok / Math.max(seconds, 0.001),
    latencyMs: latencyFigures(sorted, 1),
    errors: { total: latencies.length - ok, non2xx: latencies.length - ok, wrongOutcome: 0, socket: 0, timeouts: 0 },
    statusCodes,
    cpuUsPerResponse: null,
  };
}
