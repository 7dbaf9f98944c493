import type { MappingEntry, NewUserGroup, UserGroupRecord } from '../../../domain/user-groups/user-group.records.js';
import { MAX_ANCESTORS, userGroupFromRow } from '../../user-group-records.js';
import { columnsFromPostgres, pgNewGroupKeys, pgNewGroupParameters, selectList } from '../../user-group-columns.js';
import type { UserGroupRow } from '../../user-group-records.js';
import type { Queryable } from '../postgres-database.js';
import type { Int8 } from '../rows.js';

import { dataSourceRowId, schemaRowId } from '../../catalogue-numbers.js';
import type { Statement } from '../statements.js';

/**
 * user_groups as node-postgres returns it (bigints as strings, timestamps as Dates, JSON parsed, tags
 * as an array), each column decoded as src/store/user-group-columns.ts describes. A row straight from
 * an insert has no ancestors column (a new group's ancestors are read back when it has a parent).
 */
export interface PostgresUserGroupColumns {
  [column: string]: unknown;
  team_id: Int8;
  provided_id: string;
  ancestors?: UserGroupRow['ancestors'];
}
export type PostgresUserGroupRow = PostgresUserGroupColumns & { mapping: UserGroupRow['mapping'] };

/** A row that came back as JSON (row_to_json): timestamps as text, which the decoder takes as Dates. */
export function decodedJsonRow(row: PostgresUserGroupRow): PostgresUserGroupRow {
  return { ...row, created_at: new Date(row.created_at as string), updated_at: new Date(row.updated_at as string) };
}

export function decodeUserGroupRow(row: PostgresUserGroupRow): UserGroupRecord {
  return userGroupFromRow({ ...columnsFromPostgres(row), mapping: row.mapping, ancestors: row.ancestors ?? [] });
}

/** A group's columns, of `table` when given (the description's SELECT list). */
export const groupColumns = (table?: string) => selectList('postgres', table);
export const GROUP_COLUMNS = groupColumns();

// The mapping as the numbers of its schemas and data sources, which its rows keep (migration 0010):
// no join, so the plan is the mapping's primary key with or without statistics.
const mappingPairs = (team: string) => `(SELECT json_agg(json_build_array(m.schema_number, m.data_source_number))
  FROM user_group_mappings m WHERE m.team_id = ${team})`;

/** Mapping rows from the parallel number arrays, as row ids; a data source deleted since leaves NULL, which NOT NULL refuses. */
export const mappingRowIds = (workspace: string) =>
  `${schemaRowId(workspace, 'm.schema_id')}, ${dataSourceRowId(workspace, 'm.data_source_id')}`;

export const mappingOf = (table: string) => `COALESCE(${mappingPairs(`${table}.team_id`)}, '[]') AS mapping`;

/*
 * The ancestors ride along too, each with its level, provided id, properties and mapping: a recursive
 * walk up the parent links inside the same statement, bounded by the depth rule. A root (most groups)
 * skips the walk.
 */
export const ancestorsOf = (table: string) => `CASE WHEN ${table}.parent_team_id IS NULL THEN '[]'::json ELSE (
  WITH RECURSIVE chain(team_id, parent_team_id, level, provided_id, properties, access_rules) AS (
    SELECT a.team_id, a.parent_team_id, 1, a.provided_id, a.properties, a.access_rules FROM user_groups a WHERE a.team_id = ${table}.parent_team_id
    UNION ALL
    SELECT a.team_id, a.parent_team_id, c.level + 1, a.provided_id, a.properties, a.access_rules
      FROM user_groups a JOIN chain c ON a.team_id = c.parent_team_id WHERE c.level < ${MAX_ANCESTORS})
  SELECT json_agg(json_build_array(c.level, c.provided_id, c.properties, ${mappingPairs('c.team_id')}, c.team_id, c.access_rules::text))
    FROM chain c
) END AS ancestors`;

// Mapping and ancestors ride along as JSON so that every lookup is a single statement.
export const SELECT_GROUP = `SELECT ${groupColumns('g')}, ${mappingOf('g')}, ${ancestorsOf('g')} FROM user_groups g`;

/** Writes return the row they wrote, which saves a round trip to read it back. */
export const RETURNING_GROUP = `RETURNING ${GROUP_COLUMNS}, ${mappingOf('user_groups')}, ${ancestorsOf('user_groups')}`;

export const TENANT = 'g.workspace_id = @workspaceId AND g.environment = @environment';

/** A mapping as the two parallel arrays the statements unnest. */
export function mappingParameters(mapping: MappingEntry[]): { schemaIds: number[]; dataSourceIds: number[] } {
  return {
    schemaIds: mapping.map((entry) => entry.schemaId),
    dataSourceIds: mapping.map((entry) => entry.dataSourceId),
  };
}

/** The mappings of several groups as three parallel arrays, each row led by its group's key. */
export function mappingRows<K>(groups: Array<{ key: K; mapping: MappingEntry[] }>) {
  const rows = groups.flatMap(({ key, mapping }) => mapping.map((entry) => ({ key, entry })));
  return { keys: rows.map((row) => row.key), ...mappingParameters(rows.map((row) => row.entry)) };
}

/** What a batch sends of each new group as arrays: the tenant and the parent aside. */
const NEW_GROUP_KEYS = pgNewGroupKeys({ workspaceId: '', environment: '', parentTeamId: '' });

/** New groups' columns as the parallel arrays of a multi-row `INSERT … SELECT FROM unnest(…)`. */
export const newGroupColumns = (groups: NewUserGroup[]) => pgNewGroupParameters(groups, NEW_GROUP_KEYS);

export const findOne = async (q: Queryable, statement: Statement): Promise<UserGroupRecord | null> => {
  const [row] = await q.rows<PostgresUserGroupRow>(statement);
  return row ? decodeUserGroupRow(row) : null;
};

export const findMany = async (q: Queryable, statement: Statement): Promise<UserGroupRecord[]> =>
  (await q.rows<PostgresUserGroupRow>(statement)).map(decodeUserGroupRow);
