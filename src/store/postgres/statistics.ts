import type { PostgresDatabase } from './postgres-database.js';
import { statements } from './statements.js';

const sql = statements({
  // The service's tables: those of the schema it works in (the connection's search_path).
  ownTables: `SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`,
  autovacuum: 'SHOW autovacuum',
});

/**
 * ANALYZE of the service's own tables, so that the planner prices its statements from what the tables
 * hold after a migration or a bulk import. A role that does not own a table gets a WARNING notice for
 * it, not an error; both come back as warnings: the service runs on, with older statistics.
 */
export async function refreshStatistics(db: PostgresDatabase): Promise<string[]> {
  try {
    const { warnings } = await db.withWarnings(async (q) => {
      const tables = await q.rows<{ name: string }>(sql.ownTables());
      if (tables.length > 0)
        await q.rows({ text: `ANALYZE ${tables.map((table) => table.name).join(', ')}`, values: [] });
    });
    return warnings.map((warning) => `ANALYZE: ${warning}`);
  } catch (error) {
    return [`ANALYZE of the service's tables failed: ${(error as Error).message}`];
  }
}

/** Settings of the server that leave the service's statistics stale with nobody told. */
export async function serverWarnings(db: PostgresDatabase): Promise<string[]> {
  const [row] = await db.rows<{ autovacuum: string }>(sql.autovacuum());
  return row?.autovacuum === 'off'
    ? [
        'autovacuum is off on this PostgreSQL server: table statistics are refreshed only when something runs ANALYZE (the service does after its migrations and imports); schedule VACUUM ANALYZE or turn autovacuum on',
      ]
    : [];
}
