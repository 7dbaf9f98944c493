import type { PostgresDatabase } from './postgres-database.js';
import { statements } from './statements.js';

const sql = statements({
  // The service's tables: those of the schema it works in (the connection's search_path).
  ownTables: `SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`,
  // Its tables whose statistics no longer describe them, by autovacuum's own rule: more rows changed
  // since the last ANALYZE than 50 + 10 % of the rows it counted (a table analysed empty after a
  // migration, then bulk-loaded, counted none).
  staleTables: `SELECT quote_ident(s.relname) AS name, s.n_mod_since_analyze::float8 AS changed
    FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
    WHERE s.schemaname = current_schema()
      AND s.n_mod_since_analyze > 50 + 0.1 * greatest(c.reltuples, 0)
    ORDER BY s.relname`,
  autovacuum: 'SHOW autovacuum',
});

/** What an operator should do about statistics the service cannot keep fresh by itself. */
export const STATISTICS_ADVICE =
  "turn autovacuum on, or run VACUUM (ANALYZE) on the service's tables after every bulk load (import, sync, restore) and on a schedule";

async function analyse(db: PostgresDatabase, tables: string[]): Promise<string[]> {
  try {
    const { warnings } = await db.withWarnings(async (q) => {
      if (tables.length > 0) await q.rows({ text: `ANALYZE ${tables.join(', ')}`, values: [] });
    });
    return warnings.map((warning) => `ANALYZE: ${warning}`);
  } catch (error) {
    return [`ANALYZE of the service's tables failed: ${(error as Error).message}`];
  }
}

/**
 * ANALYZE of the service's own tables, so that the planner prices its statements from what the tables
 * hold after a migration or a bulk import. A role that does not own a table gets a WARNING notice for
 * it, not an error; both come back as warnings: the service runs on, with older statistics.
 */
export async function refreshStatistics(db: PostgresDatabase): Promise<string[]> {
  try {
    const tables = await db.rows<{ name: string }>(sql.ownTables());
    return await analyse(
      db,
      tables.map((table) => table.name),
    );
  } catch (error) {
    return [`ANALYZE of the service's tables failed: ${(error as Error).message}`];
  }
}

/**
 * At start: ANALYZE of those of the service's tables whose statistics are stale (staleTables), which
 * is what a database bulk-loaded since its last ANALYZE, with autovacuum off or not yet run, needs:
 * without column statistics the planner takes user_groups_tenant for rotations and tree locks and
 * walks the whole tenant per request (docs/performance.md, "Without statistics"). Comes back as
 * warnings: the tables it analysed and what the operator should do so that it is not needed.
 */
export async function refreshStaleStatistics(db: PostgresDatabase): Promise<string[]> {
  try {
    const stale = await db.rows<{ name: string; changed: number }>(sql.staleTables());
    if (stale.length === 0) return [];
    const failures = await analyse(
      db,
      stale.map((table) => table.name),
    );
    // With autovacuum on, stale statistics are a moment's lag it is about to close: nothing to tell.
    const [setting] = await db.rows<{ autovacuum: string }>(sql.autovacuum());
    if (setting?.autovacuum !== 'off') return failures;
    const listed = stale.map((table) => `${table.name} (${table.changed} rows changed)`).join(', ');
    return [
      `stale planner statistics at start: ${listed} since their last ANALYZE; ${failures.length === 0 ? 'analysed them now' : 'could not analyse them all'}. Without fresh statistics PostgreSQL plans some of the service's statements to read a whole tenant per request (docs/performance.md); ${STATISTICS_ADVICE}`,
      ...failures,
    ];
  } catch (error) {
    return [`the check of the service's table statistics failed: ${(error as Error).message}`];
  }
}

/** Settings of the server that leave the service's statistics stale with nobody told. */
export async function serverWarnings(db: PostgresDatabase): Promise<string[]> {
  const [row] = await db.rows<{ autovacuum: string }>(sql.autovacuum());
  return row?.autovacuum === 'off'
    ? [
        `autovacuum is off on this PostgreSQL server: table statistics are refreshed only when something runs ANALYZE (the service does at start when they are stale, after its migrations and after imports), and rows written between those go unseen by the planner; ${STATISTICS_ADVICE}`,
      ]
    : [];
}
