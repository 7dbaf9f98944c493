import type { SyncResult } from '../domain/user-group-sync/user-group-sync.service.js';

/** A sync as the API shows it: the plan, each group with its line (NDJSON) or index (array). */
export function presentSync(result: SyncResult) {
  return {
    success: 1 as const,
    sync: {
      id: result.id,
      dry_run: result.dryRun,
      applied: result.applied,
      summary: result.summary,
      plan: result.items.map((item) => ({
        action: item.action,
        user_group_id: item.providedId,
        team_id: item.teamId,
        ...(item.at ?? {}),
        ...(item.changes ? { changes: item.changes } : {}),
      })),
    },
  };
}
