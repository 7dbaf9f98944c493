import type { Migration } from '../../migration.js';

/*
 * The busiest groups of an environment over a range of days (GET /api/admin/usage/top) summed from an index alone:
 * the environment's counts in team_id order, each group's days together, so the sums come group by group without a
 * temporary B-tree of every group and without reading the table (a covering index). PostgreSQL's 22 is the same
 * index. A usage write updates it too (its counts are in it). group_usage_tenant_day goes: only the top read it,
 * and without the counts it sent every row back to the table. An expand step: the previous release needs neither
 * index to be right (its top takes whichever the planner finds).
 */
export const groupUsageTenantTeamIndex: Migration = {
  version: 20,
  name: 'group usage tenant team index',
  kind: 'expand',
  sql: `CREATE INDEX IF NOT EXISTS group_usage_tenant_team
  ON group_usage(workspace_id, environment, team_id, day, embed_tokens_minted, verifications, reads);
DROP INDEX IF EXISTS group_usage_tenant_day;`,
};
