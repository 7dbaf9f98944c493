import type { UserGroupRecord } from '../../domain/user-groups/user-group.records.js';
import { MAX_ANCESTORS, userGroupFromRow, type UserGroupRow } from '../user-group-records.js';
import { columnsFromSqlite, READ_COLUMNS, selectList } from '../user-group-columns.js';

/*
 * SQLite's user-group rows: the SELECT every read of a group shares (its columns from
 * src/store/user-group-columns.ts, its mapping and its ancestors), their decoding, and the case
 * folding the list's name search uses.
 */

/**
 * A group's cells as SQLite returns them, in SELECT_GROUP's column order (the statements run in raw
 * mode: an array per row is cheaper than the object better-sqlite3 would build): the description's
 * columns (src/store/user-group-columns.ts, READ_COLUMNS), then mapping and ancestors as JSON text.
 */
export type SqliteUserGroupCells = unknown[];

// The mapping as the numbers of its schemas and data sources, which its rows keep (migration 0010).
const mappingOf = (team: string) => `(SELECT json_group_array(json_array(m.schema_number, m.data_source_number))
  FROM user_group_mappings m WHERE m.team_id = ${team})`;

/*
 * The ancestors ride along too, each with its level, provided id, properties, mapping and access rules
 * (their stored text, as a JSON string: parsed once per distinct text): a recursive walk up the
 * parent links inside the same statement, bounded by the depth rule. A root (most groups) skips the walk.
 */
const ANCESTORS = `CASE WHEN g.parent_team_id IS NULL THEN '[]' ELSE (
  WITH RECURSIVE chain(team_id, parent_team_id, level, provided_id, properties, access_rules) AS (
    SELECT a.team_id, a.parent_team_id, 1, a.provided_id, a.properties, a.access_rules FROM user_groups a WHERE a.team_id = g.parent_team_id
    UNION ALL
    SELECT a.team_id, a.parent_team_id, c.level + 1, a.provided_id, a.properties, a.access_rules
      FROM user_groups a JOIN chain c ON a.team_id = c.parent_team_id WHERE c.level < ${MAX_ANCESTORS})
  SELECT json_group_array(json_array(c.level, c.provided_id, json(c.properties), json(${mappingOf('c.team_id')}),
    c.team_id, c.access_rules)) FROM chain c
) END AS ancestors`;

// Mapping and ancestors ride along as JSON so that every lookup is a single statement.
const MAPPING_CELL = READ_COLUMNS.length;
const ANCESTORS_CELL = MAPPING_CELL + 1;
export const SELECT_GROUP = `SELECT ${selectList('sqlite', 'g')}, ${mappingOf('g.team_id')} AS mapping, ${ANCESTORS}
  FROM user_groups g`;

export function decodeUserGroupRow(cells: SqliteUserGroupCells): UserGroupRecord {
  const ancestors = cells[ANCESTORS_CELL] as string;
  return userGroupFromRow({
    ...columnsFromSqlite(cells),
    mapping: JSON.parse(cells[MAPPING_CELL] as string) as [number, number][],
    ancestors: ancestors === '[]' ? [] : (JSON.parse(ancestors) as UserGroupRow['ancestors']),
  });
}

export const RETURNING_IDENTITY =
  'RETURNING team_id AS teamId, workspace_id AS workspaceId, environment, provided_id AS providedId';

/**
 * Case folding for name search. SQLite's LIKE folds ASCII letters only, so it decides alone only
 * when both the name and the search text are ASCII; otherwise this JavaScript function folds them.
 */
export const CASEFOLD_FUNCTION = 'ugs_casefold';

export function casefold(text: string): string {
  return text.toLowerCase();
}

/** Longer LIKE patterns hit SQLITE_MAX_LIKE_PATTERN_LENGTH; the folding path has no such limit. */
const MAX_LIKE_SEARCH_LENGTH = 1000;

export function likeCanDecide(search: string): boolean {
  return search.length <= MAX_LIKE_SEARCH_LENGTH && Buffer.byteLength(search) === search.length;
}
