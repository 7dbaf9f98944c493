import type { PostgresMigration } from '../migrate.js';

/*
 * The audit trail filtered by a person (the admin API's person_issuer and person_sub, `ugs audit
 * --person`) read through an index, as SQLite's audit_events_person (its migration 17) serves it there,
 * rather than by reading every event of the workspace. Built concurrently: audit_events only grows,
 * and writes go on meanwhile. An expand step: the previous release never reads it.
 */
export const auditEventsPersonIndex: PostgresMigration = {
  version: 20,
  name: 'audit events person index',
  kind: 'expand',
  sql: '',
  concurrentIndexes: [
    {
      name: 'audit_events_person',
      sql: `CREATE INDEX CONCURRENTLY IF NOT EXISTS audit_events_person ON audit_events (workspace_id, actor_subject, id)
  WHERE actor_subject IS NOT NULL`,
    },
  ],
};
