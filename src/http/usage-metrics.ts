import { Counter, Registry } from 'prom-client';
import type { UsageRecorder } from '../domain/usage/usage-counter.js';
import type { UsageCounts } from '../domain/usage/usage.records.js';

/**
 * `ugs_usage_total{workspace_id, metric}`: the usage this process counted (docs/api.md#usage-per-group), per workspace
 * and metric, never per group (a label per group would be unbounded). Counted when a batch is taken
 * for writing, so it trails the requests by at most the flush interval; summed over a cluster's
 * workers like every counter.
 */
export function usageMetrics(recorder: UsageRecorder): Registry {
  const registry = new Registry();
  const counted = new Counter({
    name: 'ugs_usage_total',
    help: 'Usage counted per workspace: embed tokens minted, verifications, reads of existing groups (get-or-create).',
    labelNames: ['workspace_id', 'metric'] as const,
    registers: [registry],
  });
  // Summed per workspace first: a batch holds a count per group, and the counter hashes its labels on each inc.
  recorder.observe((batch) => {
    const byWorkspace = new Map<number, UsageCounts>();
    for (const { workspaceId, embedTokensMinted, verifications, reads } of batch) {
      const sums = byWorkspace.get(workspaceId);
      if (sums === undefined) byWorkspace.set(workspaceId, { embedTokensMinted, verifications, reads });
      else {
        sums.embedTokensMinted += embedTokensMinted;
        sums.verifications += verifications;
        sums.reads += reads;
      }
    }
    for (const [workspaceId, { embedTokensMinted, verifications, reads }] of byWorkspace) {
      const workspace_id = String(workspaceId);
      if (embedTokensMinted > 0) counted.inc({ workspace_id, metric: 'embed_tokens_minted' }, embedTokensMinted);
      if (verifications > 0) counted.inc({ workspace_id, metric: 'verifications' }, verifications);
      if (reads > 0) counted.inc({ workspace_id, metric: 'reads' }, reads);
    }
  });
  return registry;
}
