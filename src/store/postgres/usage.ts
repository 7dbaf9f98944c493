import type { UsageMetric } from '../../domain/usage/usage.records.js';
import type { UsageStore } from '../../domain/usage/usage.port.js';
import type { PostgresDatabase } from './postgres-database.js';
import { toNumber, type Int8 } from './rows.js';
import { statements } from './statements.js';

interface CountsRow {
  embed_tokens_minted: Int8;
  verifications: Int8;
  reads: Int8;
}

const counts = (row: CountsRow) => ({
  embedTokensMinted: toNumber(row.embed_tokens_minted),
  verifications: toNumber(row.verifications),
  reads: toNumber(row.reads),
});

/** The busiest groups by one column (fixed here, never taken from input); see SQLite's statement. */
const topStatement = (column: UsageMetric) => `SELECT g.team_id, g.provided_id, g.name,
    u.embed_tokens_minted, u.verifications, u.reads
  FROM (SELECT team_id, sum(embed_tokens_minted) AS embed_tokens_minted, sum(verifications) AS verifications,
      sum(reads) AS reads
    FROM group_usage
    WHERE workspace_id = @workspaceId AND environment = @environment AND day BETWEEN @since::date AND @until::date
    GROUP BY team_id) u
  JOIN user_groups g ON g.team_id = u.team_id AND g.workspace_id = @workspaceId AND g.environment = @environment
  WHERE u.${column} > 0
  ORDER BY u.${column} DESC, g.team_id
  LIMIT @limit`;

const sql = statements({
  // One statement for the whole batch; the counts of a row present are added to, never replaced.
  add: `INSERT INTO group_usage (team_id, day, workspace_id, environment, embed_tokens_minted, verifications, reads)
    SELECT * FROM unnest(@teamIds::bigint[], @days::date[], @workspaceIds::bigint[], @environments::text[],
      @minted::bigint[], @verifications::bigint[], @reads::bigint[])
    ON CONFLICT (team_id, day) DO UPDATE SET
      embed_tokens_minted = group_usage.embed_tokens_minted + excluded.embed_tokens_minted,
      verifications = group_usage.verifications + excluded.verifications,
      reads = group_usage.reads + excluded.reads`,
  days: `SELECT day::text AS day, embed_tokens_minted, verifications, reads FROM group_usage
    WHERE team_id = @teamId AND workspace_id = @workspaceId AND environment = @environment
      AND day BETWEEN @since::date AND @until::date
    ORDER BY day`,
  top_embed_tokens_minted: topStatement('embed_tokens_minted'),
  top_verifications: topStatement('verifications'),
  top_reads: topStatement('reads'),
  prune: 'WITH gone AS (DELETE FROM group_usage WHERE day < @before::date RETURNING 1) SELECT count(*) AS n FROM gone',
});

export function usageMethods(db: PostgresDatabase): UsageStore {
  return {
    async addUsage(increments) {
      if (increments.length === 0) return;
      // Rows in key order: two processes upserting overlapping batches lock them in the same order.
      const sorted = [...increments].sort((a, b) => a.teamId - b.teamId || (a.day < b.day ? -1 : 1));
      await db.rows(
        sql.add({
          teamIds: sorted.map((i) => i.teamId),
          days: sorted.map((i) => i.day),
          workspaceIds: sorted.map((i) => i.workspaceId),
          environments: sorted.map((i) => i.environment),
          minted: sorted.map((i) => i.embedTokensMinted),
          verifications: sorted.map((i) => i.verifications),
          reads: sorted.map((i) => i.reads),
        }),
      );
    },
    async listUsageDays(tenant, teamId, { since, until }) {
      const rows = await db.rows<CountsRow & { day: string }>(
        sql.days({ teamId, workspaceId: tenant.workspaceId, environment: tenant.environment, since, until }),
      );
      return rows.map((row) => ({ day: row.day, ...counts(row) }));
    },
    async listTopUsage(tenant, { since, until, metric, limit }) {
      const rows = await db.rows<CountsRow & { team_id: Int8; provided_id: string; name: string }>(
        sql[`top_${metric}`]({ workspaceId: tenant.workspaceId, environment: tenant.environment, since, until, limit }),
      );
      return rows.map((row) => ({
        teamId: toNumber(row.team_id),
        providedId: row.provided_id,
        name: row.name,
        ...counts(row),
      }));
    },
    async pruneUsage(before) {
      const [row] = await db.rows<{ n: Int8 }>(sql.prune({ before }));
      return row ? toNumber(row.n) : 0;
    },
  };
}
