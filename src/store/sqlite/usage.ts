import type { Database } from 'better-sqlite3';
import type { UsageDay, UsageIncrement, UsageMetric, UsageTotal } from '../../domain/usage/usage.records.js';
import type { UsageStore } from '../../domain/usage/usage.port.js';
import type { Synchronous } from './busy-retry.js';
import { preparedOnFirstUse } from './prepared.js';
import { topCandidates, topOfRound } from '../../domain/usage/usage.rules.js';

const COUNTS = 'embed_tokens_minted AS embedTokensMinted, verifications, reads';

/** Column names are fixed here, never taken from input. */
const METRIC_COLUMN: Record<UsageMetric, string> = {
  embed_tokens_minted: 'embed_tokens_minted',
  verifications: 'verifications',
  reads: 'reads',
};

/**
 * The busiest groups by one column; a group is named as it is now, and one deleted since is left out. Ranked first,
 * named after: the column's sums are ranked over group_usage alone (the covering group_usage_tenant_team, named:
 * without it SQLite 3.53 took the tenant's day index and read the table for the column; summed group by group in
 * team_id order); only the @candidates ranked first get their three sums (CROSS JOIN: those
 * candidates first, then their days by index) and are looked up in user_groups. A deleted group comes back without
 * a name, and the store ranks more candidates when too few were left (topOfRound).
 */
const topStatement = (column: string) => `WITH top AS (
    SELECT team_id, sum(${column}) AS total
    FROM group_usage INDEXED BY group_usage_tenant_team
    WHERE workspace_id = @workspaceId AND environment = @environment AND day BETWEEN @since AND @until
    GROUP BY team_id
    HAVING sum(${column}) > 0
    ORDER BY sum(${column}) DESC, team_id
    LIMIT @candidates),
  counts AS (
    SELECT u.team_id, sum(u.embed_tokens_minted) AS embed_tokens_minted, sum(u.verifications) AS verifications,
      sum(u.reads) AS reads
    FROM top CROSS JOIN group_usage u ON u.team_id = top.team_id AND u.workspace_id = @workspaceId
      AND u.environment = @environment AND u.day BETWEEN @since AND @until
    GROUP BY u.team_id)
  SELECT top.team_id AS teamId, g.provided_id AS providedId, g.name,
    c.embed_tokens_minted AS embedTokensMinted, c.verifications, c.reads
  FROM top
  JOIN counts c ON c.team_id = top.team_id
  LEFT JOIN user_groups g ON g.team_id = top.team_id AND g.workspace_id = @workspaceId AND g.environment = @environment
  ORDER BY top.total DESC, top.team_id`;

export function usageMethods(db: Database): Synchronous<UsageStore> {
  const sql = preparedOnFirstUse(db, {
    // An update of the day's row, and an insert only where there is none: after a group's first
    // write of a day every write is an update, which costs SQLite about half an upsert (docs/performance-history.md).
    addToDay: `UPDATE group_usage SET embed_tokens_minted = embed_tokens_minted + ?, verifications = verifications + ?,
        reads = reads + ?
      WHERE team_id = ? AND day = ?`,
    insertDay: `INSERT INTO group_usage (team_id, day, workspace_id, environment, embed_tokens_minted, verifications, reads)
      VALUES (?, ?, ?, ?, ?, ?, ?)`,
    days: `SELECT day, ${COUNTS} FROM group_usage
      WHERE team_id = @teamId AND workspace_id = @workspaceId AND environment = @environment
        AND day BETWEEN @since AND @until
      ORDER BY day`,
    top_embed_tokens_minted: topStatement(METRIC_COLUMN.embed_tokens_minted),
    top_verifications: topStatement(METRIC_COLUMN.verifications),
    top_reads: topStatement(METRIC_COLUMN.reads),
    prune: 'DELETE FROM group_usage WHERE day < ?',
  });

  // Positional parameters: binding seven named ones cost a third of the write.
  const add = db.transaction((increments: readonly UsageIncrement[]) => {
    for (const { teamId, day, workspaceId, environment, embedTokensMinted, verifications, reads } of increments)
      if (sql.addToDay.run(embedTokensMinted, verifications, reads, teamId, day).changes === 0)
        sql.insertDay.run(teamId, day, workspaceId, environment, embedTokensMinted, verifications, reads);
  });

  return {
    addUsage: (increments) => {
      // BEGIN IMMEDIATE: the write lock first, so a busy database fails the batch before it reads anything.
      add.immediate(increments);
    },
    listUsageDays: (tenant, teamId, { since, until }) =>
      sql.days.all({
        teamId,
        workspaceId: tenant.workspaceId,
        environment: tenant.environment,
        since,
        until,
      }) as UsageDay[],
    listTopUsage: (tenant, { since, until, metric, limit }) => {
      const { workspaceId, environment } = tenant;
      for (let candidates = topCandidates(limit); ; candidates = topCandidates(limit, candidates)) {
        const rows = sql[`top_${metric}`].all({ workspaceId, environment, since, until, candidates }) as Array<
          Omit<UsageTotal, 'name'> & { name: string | null }
        >;
        const top = topOfRound(rows, (row) => row.name !== null, limit, candidates);
        if (top) return top as UsageTotal[];
      }
    },
    pruneUsage: (before) => sql.prune.run(before).changes,
  };
}
