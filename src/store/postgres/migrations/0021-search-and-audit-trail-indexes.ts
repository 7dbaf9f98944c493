import type { PostgresMigration } from '../migrate.js';

/*
 * Two admin reads at millions of groups (docs/performance.md, "Scale"), each through an index rather
 * than a walk of the tenant or of every audit event:
 * - The search's name substring (GET /api/admin/user-groups?q=): a trigram index on lower(name),
 *   which serves `lower(name) LIKE '%…%'`. Its operator class comes from pg_trgm, created here when
 *   missing, in schema public (docs/adr/0035-pg-trgm-for-the-admin-search.md): an extension belongs
 *   to the database, not to the service's schema, and dropping that schema must not take it away
 *   from anyone else. Where it is already installed (any schema) it is used as it is.
 * - A group's audit trail (GET /api/admin/audit-events?team_id=): (workspace_id, team_id, id), walked
 *   backwards from the cursor as audit_events_workspace walks a workspace's.
 * Both built concurrently: the tables may be large and writes go on meanwhile. An expand step: the
 * previous release never reads either index, and the extension changes nothing it does.
 */
export const searchAndAuditTrailIndexes: PostgresMigration = {
  version: 21,
  name: 'search and audit trail indexes',
  kind: 'expand',
  extension: 'pg_trgm',
  sql: 'CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public',
  concurrentIndexes: [
    {
      name: 'user_groups_name_trigrams',
      sql: `CREATE INDEX CONCURRENTLY IF NOT EXISTS user_groups_name_trigrams ON user_groups
  USING gin (lower(name) gin_trgm_ops)`,
    },
    {
      name: 'audit_events_team',
      sql: 'CREATE INDEX CONCURRENTLY IF NOT EXISTS audit_events_team ON audit_events (workspace_id, team_id, id)',
    },
  ],
};
