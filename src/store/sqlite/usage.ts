import type { Database } from 'better-sqlite3';
import type { UsageDay, UsageIncrement, UsageMetric, UsageTotal } from '../../domain/usage/usage.records.js';
import type { UsageStore } from '../../domain/usage/usage.port.js';
import type { Synchronous } from './busy-retry.js';
import { preparedOnFirstUse } from './prepared.js';

const COUNTS = 'embed_tokens_minted AS embedTokensMinted, verifications, reads';

/** Column names are fixed here, never taken from input. */
const METRIC_COLUMN: Record<UsageMetric, string> = {
  embed_tokens_minted: 'embed_tokens_minted',
  verifications: 'verifications',
  reads: 'reads',
};

/** The busiest groups by one column; a group is named as it is now, and one deleted since is left out. */
const topStatement = (column: string) => `SELECT g.team_id AS teamId, g.provided_id AS providedId, g.name,
    u.embed_tokens_minted AS embedTokensMinted, u.verifications, u.reads
  FROM (SELECT team_id, sum(embed_tokens_minted) AS embed_tokens_minted, sum(verifications) AS verifications,
      sum(reads) AS reads
    FROM group_usage WHERE workspace_id = @workspaceId AND environment = @environment AND day BETWEEN @since AND @until
    GROUP BY team_id) u
  JOIN user_groups g ON g.team_id = u.team_id AND g.workspace_id = @workspaceId AND g.environment = @environment
  WHERE u.${column} > 0
  ORDER BY u.${column} DESC, g.team_id
  LIMIT @limit`;

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
    listTopUsage: (tenant, { since, until, metric, limit }) =>
      sql[`top_${metric}`].all({
        workspaceId: tenant.workspaceId,
        environment: tenant.environment,
        since,
        until,
        limit,
      }) as UsageTotal[],
    pruneUsage: (before) => sql.prune.run(before).changes,
  };
}
