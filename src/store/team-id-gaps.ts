/*
 * The SQL both engines run to keep an import's team_id (src/domain/user-groups/team-ids.rules.ts
 * decides; migration 0014 on SQLite, 0015 on PostgreSQL, made the table).
 */

/** Whether `@teamId` lies in a gap the numbering jumped over (an SQL condition). */
export const IN_TEAM_ID_GAP = 'EXISTS (SELECT 1 FROM team_id_gaps WHERE low <= @teamId AND high >= @teamId)';

export const TEAM_ID_GAP_SQL = {
  holding: 'SELECT low, high FROM team_id_gaps WHERE low <= @teamId AND high >= @teamId',
  remove: 'DELETE FROM team_id_gaps WHERE low = @low',
  add: 'INSERT INTO team_id_gaps (low, high) VALUES (@low, @high)',
} as const;
