import type { Migration } from '../../migration.js';

/*
 * A group's audit trail (the admin API's team_id filter) read through an index, walked backwards from
 * the cursor, rather than by reading every event of the workspace through audit_events_workspace, as
 * PostgreSQL's audit_events_team (its migration 21) serves it there. An expand step: the previous
 * release never reads it.
 */
export const auditEventsTeamIndex: Migration = {
  version: 19,
  name: 'audit-events-team-index',
  kind: 'expand',
  sql: 'CREATE INDEX IF NOT EXISTS audit_events_team ON audit_events(workspace_id, team_id, id);',
};
