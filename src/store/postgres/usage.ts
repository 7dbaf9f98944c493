import type { UsageMetric } from '../../domain/usage/usage.records.js';
import type { UsageStore } from '../../domain/usage/usage.port.js';
import { topCandidates, topOfRound } from '../../domain/usage/usage.rules.js';
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

/**
 * The busiest groups by one column (fixed here, never taken from input); see SQLite's statement. Ranked first, named
 * after: the column's sums are ranked over group_usage alone (group_usage_tenant_team, index-only, summed group by
 * group in team_id order, a top-N heap of @candidates); only those candidates get their three sums (by index) and
 * are looked up in user_groups. A deleted group comes back without a name, and the store ranks more candidates when
 * too few were left (topOfRound).
 */
const topStatement = (column: UsageMetric) => `WITH top AS (
    SELECT team_id, sum(${column}) AS total
    FROM group_usage
    WHERE workspace_id = @workspaceId AND environment = @environment AND day BETWEEN @since::date AND @until::date
    GROUP BY team_id
    HAVING sum(${column}) > 0
    ORDER BY sum(${column}) DESC, team_id
    LIMIT @candidates),
  counts AS (
    SELECT u.team_id, sum(u.embed_tokens_minted) AS embed_tokens_minted, sum(u.verifications) AS verifications,
      sum(u.reads) AS reads
    FROM top JOIN group_usage u ON u.team_id = top.team_id AND u.workspace_id = @workspaceId
      AND u.environment = @environment AND u.day BETWEEN @since::date AND @until::date
    GROUP BY u.team_id)
  SELECT top.team_id, g.provided_id, g.name, c.embed_tokens_minted, c.verifications, c.reads
  FROM top
  JOIN counts c ON c.team_id = top.team_id
  LEFT JOIN user_groups g ON g.team_id = top.team_id AND g.workspace_id = @workspaceId AND g.environment = @environment
  ORDER BY top.total DESC, top.team_id`;

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

/**
 * The statement timeout of the usage top (docs/api.md#usage-per-group): longer than the pool's (5 s by default), as its
 * cost grows with the usage rows of the environment, not with one group; shorter than the server's idle socket
 * timeout (60 s), so that the answer, or its `503`, still reaches the caller.
 */
export const TOP_STATEMENT_TIMEOUT_MS = 30_000;

/** `statementTimeoutMs`: the pool's (PostgresStoreOptions); the top's is never shorter. */
export function usageMethods(db: PostgresDatabase, statementTimeoutMs?: number): UsageStore {
  const topTimeoutMs = Math.max(TOP_STATEMENT_TIMEOUT_MS, statementTimeoutMs ?? 0);
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
    listTopUsage: (tenant, { since, until, metric, limit }) =>
      // A longer statement timeout than the pool's for this one admin read (TOP_STATEMENT_TIMEOUT_MS).
      db.transaction(
        async (tx) => {
          const { workspaceId, environment } = tenant;
          for (let candidates = topCandidates(limit); ; candidates = topCandidates(limit, candidates)) {
            const rows = await tx.rows<CountsRow & { team_id: Int8; provided_id: string | null; name: string | null }>(
              sql[`top_${metric}`]({ workspaceId, environment, since, until, candidates }),
            );
            const top = topOfRound(rows, (row) => row.name !== null, limit, candidates);
            if (top)
              return top.map((row) => ({
                teamId: toNumber(row.team_id),
                providedId: row.provided_id as string,
                name: row.name as string,
                ...counts(row),
              }));
          }
        },
        { statementTimeoutMs: topTimeoutMs },
      ),
    async pruneUsage(before) {
      const [row] = await db.rows<{ n: Int8 }>(sql.prune({ before }));
      return row ? toNumber(row.n) : 0;
    },
  };
}
