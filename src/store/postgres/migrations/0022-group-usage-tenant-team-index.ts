import type { PostgresMigration } from '../migrate.js';

/*
 * The busiest groups of an environment over a range of days (GET /api/admin/usage/top) summed from an index alone:
 * the environment's counts in team_id order, each group's days together, so the sums come group by group (a
 * GroupAggregate, no hash of every group) without reading the table (an index-only scan where the visibility map
 * allows). The same index as SQLite's 20. The counts being in it, a usage write updates it (no HOT update). Built
 * concurrently: the usage flushes go on meanwhile. An expand step: the previous release never needs it.
 */
export const groupUsageTenantTeamIndex: PostgresMigration = {
  version: 22,
  name: 'group usage tenant team index',
  kind: 'expand',
  sql: '',
  concurrentIndexes: [
    {
      name: 'group_usage_tenant_team',
      sql: `CREATE INDEX CONCURRENTLY IF NOT EXISTS group_usage_tenant_team
  ON group_usage (workspace_id, environment, team_id, day) INCLUDE (embed_tokens_minted, verifications, reads)`,
    },
  ],
};
