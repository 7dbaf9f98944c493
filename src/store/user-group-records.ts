import {
  assertMergedPropertiesWithinBound,
  checkedParentTeamId,
  MAX_HIERARCHY_DEPTH,
} from '../domain/user-groups/hierarchy.rules.js';
import type { JsonObject } from '../domain/common.records.js';
import type { UserGroupPatch, UserGroupRecord } from '../domain/user-groups/user-group.records.js';
import type { Environment } from '../domain/tenancy.js';
import type { UserGroupQuery } from '../domain/user-groups/user-groups.port.js';

/*
 * What both engines share about user groups: how a row becomes a record, how the one-statement patch
 * update is parameterised, how a provided-id prefix becomes a range, and how a refused batch reads.
 */

/** A user_groups row with its mapping, once the engine has decoded its own types (ids, timestamps, JSON). */
export interface UserGroupRow {
  team_id: number;
  workspace_id: number;
  environment: Environment;
  provided_id: string;
  name: string;
  token_hash: string;
  token_ciphertext: string;
  properties: JsonObject | null;
  version: number;
  token_generation: number;
  created_at: string;
  updated_at: string;
  /** [schema_id, data_source_id] pairs, sorted by schema_id. */
  mapping: [number, number][];
  is_demo_group: boolean;
  tags: string[];
  /** [level, provided_id, properties, mapping pairs or null] per ancestor, in any order; level 1 is the parent. */
  ancestors: AncestorCell[];
}

export type AncestorCell = [number, string, JsonObject | null, [number, number][] | null];

/** A group's ancestors are at most this many, and every read brings them along. */
export const MAX_ANCESTORS = MAX_HIERARCHY_DEPTH - 1;

const toMapping = (pairs: [number, number][]) =>
  pairs.map(([schemaId, dataSourceId]) => ({ schemaId, dataSourceId })).sort((a, b) => a.schemaId - b.schemaId);

export function userGroupFromRow(row: UserGroupRow): UserGroupRecord {
  const ancestors = [...row.ancestors].sort((a, b) => a[0] - b[0]);
  return {
    teamId: row.team_id,
    workspaceId: row.workspace_id,
    environment: row.environment,
    providedId: row.provided_id,
    name: row.name,
    tokenHash: row.token_hash,
    tokenCiphertext: row.token_ciphertext,
    properties: row.properties,
    // Sorted here rather than by the aggregate in SQL, which would cost every lookup a temporary sort.
    mapping: toMapping(row.mapping),
    parentProvidedId: ancestors[0]?.[1] ?? null,
    ancestors: ancestors.map(([, , properties, mapping]) => ({ properties, mapping: toMapping(mapping ?? []) })),
    isDemoGroup: row.is_demo_group,
    tags: row.tags,
    version: row.version,
    tokenGeneration: row.token_generation,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Properties are stored as the JSON text the caller's object serialises to; null stays SQL NULL. */
export function serializeProperties(properties: JsonObject | null): string | null {
  return properties === null ? null : JSON.stringify(properties);
}

/**
 * The patch keys the update statement writes as columns; the mapping lives in its own table, and the
 * parent link is written by team id once the engine has checked it (`parentTeamId`).
 */
export const PATCHABLE_GROUP_COLUMNS = [
  'providedId',
  'name',
  'properties',
  'isDemoGroup',
  'tags',
  'tokenHash',
  'tokenCiphertext',
  'parentTeamId',
] as const;

/** The list filters both engines bind the same way (the demo flag is each engine's own type). */
export function listFilterParameters(query: UserGroupQuery): { parent: string | null; tag: string | null } {
  return { parent: query.parent ?? null, tag: query.tag ?? null };
}

/** The row of an engine's parent-link query: [level, team_id] pairs of the would-be parent's chain, and the subtree's height. */
export interface ParentLinkRow {
  chain: [number, number][];
  height: number;
}

/** The parent's team id, once the rule module has checked the link on the facts the engine read (SPEC §11). */
export function parentTeamIdFromRow(parentProvidedId: string, row: ParentLinkRow, teamId: number | undefined): number {
  return checkedParentTeamId(parentProvidedId, {
    parentChain: [...row.chain].sort((a, b) => a[0] - b[0]).map(([, id]) => id),
    ...(teamId === undefined ? {} : { teamId }),
    subtreeHeight: row.height,
  });
}

/**
 * The row of an engine's merged-size query (`mergedSizes`), JSON decoded: the written group's provided
 * id and properties (null for a group being created), the properties of its ancestors (`old_chain`)
 * and of its would-be ancestors under a new parent (`new_chain`) as (level, properties), and its descendants
 * as (level, team id, parent's team id, provided id, properties). Levels come in any order.
 */
export interface MergedSizeRow {
  provided_id: string | null;
  own: JsonObject | null;
  old_chain: [number, JsonObject | null][];
  new_chain: [number, JsonObject | null][];
  subtree: [number, number, number, string, JsonObject | null][];
}

/**
 * A write that can change merged properties: a create under a parent (no team id), or an update that
 * sets properties (undefined: unchanged) and/or links the group to another parent (`parentTeamId`:
 * null detaches, undefined keeps the link).
 */
export interface MergedSizeWrite {
  teamId?: number;
  providedId?: string;
  properties?: JsonObject | null;
  parentTeamId?: number | null;
}

/**
 * What an update writes that the merged-size rule looks at, once the engine has checked its link
 * (`parentTeamId`); undefined when the update cannot grow any group's merged properties (it sets no
 * properties and links to no new parent), so that the engine reads nothing.
 */
export function mergedSizeWriteOfUpdate(
  teamId: number,
  patch: UserGroupPatch,
  parentTeamId: number | null | undefined,
): MergedSizeWrite | undefined {
  if (patch.properties === undefined && (parentTeamId === undefined || parentTeamId === null)) return undefined;
  return {
    teamId,
    ...(patch.providedId === undefined ? {} : { providedId: patch.providedId }),
    ...(patch.properties === undefined ? {} : { properties: patch.properties }),
    ...(parentTeamId === undefined ? {} : { parentTeamId }),
  };
}

/**
 * The merged-size query's common table expressions, the same text on both engines (PostgreSQL's
 * casts aside): the written group (@teamId, none for a create), its ancestors, the chain from the
 * would-be parent (@parentTeamId) up, and its subtree, each bounded by the depth rule.
 */
export const mergedSizeChains = (cast: { bigint: string }) => `WITH RECURSIVE
  target(team_id, parent_team_id, provided_id, properties) AS (
    SELECT team_id, parent_team_id, provided_id, properties FROM user_groups
      WHERE team_id = @teamId${cast.bigint} AND workspace_id = @workspaceId AND environment = @environment),
  old_chain(team_id, parent_team_id, level, properties) AS (
    SELECT a.team_id, a.parent_team_id, 1, a.properties FROM user_groups a JOIN target t ON a.team_id = t.parent_team_id
    UNION ALL
    SELECT a.team_id, a.parent_team_id, c.level + 1, a.properties FROM user_groups a JOIN old_chain c ON a.team_id = c.parent_team_id
      WHERE c.level < ${MAX_ANCESTORS}),
  new_chain(team_id, parent_team_id, level, properties) AS (
    SELECT a.team_id, a.parent_team_id, 1, a.properties FROM user_groups a WHERE a.team_id = @parentTeamId${cast.bigint}
    UNION ALL
    SELECT a.team_id, a.parent_team_id, c.level + 1, a.properties FROM user_groups a JOIN new_chain c ON a.team_id = c.parent_team_id
      WHERE c.level < ${MAX_ANCESTORS}),
  subtree(team_id, parent_team_id, provided_id, level, properties) AS (
    SELECT u.team_id, u.parent_team_id, u.provided_id, 1, u.properties FROM user_groups u WHERE u.parent_team_id = @teamId${cast.bigint}
    UNION ALL
    SELECT u.team_id, u.parent_team_id, u.provided_id, s.level + 1, u.properties FROM user_groups u JOIN subtree s ON u.parent_team_id = s.team_id
      WHERE s.level < ${MAX_ANCESTORS})`;

/** Asks the rule module (src/domain/user-groups/hierarchy.rules.ts) about the write, on the facts the engine read. */
export function assertMergedSizeFromRow(row: MergedSizeRow, write: MergedSizeWrite): void {
  const levels = <T extends [number, ...unknown[]]>(cells: T[]) => [...cells].sort((a, b) => a[0] - b[0]);
  const chain = (cells: [number, JsonObject | null][]) => levels(cells).map(([, properties]) => properties);
  const ancestorsBefore = chain(row.old_chain);
  const ancestorsAfter =
    write.parentTeamId === undefined ? ancestorsBefore : write.parentTeamId === null ? [] : chain(row.new_chain);
  assertMergedPropertiesWithinBound({
    providedId: write.providedId ?? row.provided_id ?? '',
    links: write.parentTeamId !== undefined && write.parentTeamId !== null,
    after: { ancestors: ancestorsAfter, properties: write.properties === undefined ? row.own : write.properties },
    ...(write.teamId === undefined
      ? { descendants: [] }
      : {
          teamId: write.teamId,
          before: { ancestors: ancestorsBefore, properties: row.own },
          descendants: levels(row.subtree).map(([, teamId, parentTeamId, providedId, properties]) => ({
            teamId,
            parentTeamId,
            providedId,
            properties,
          })),
        }),
  });
}

/**
 * Named parameters for an UPDATE that writes a column only when the patch has its key
 * (`col = CASE WHEN @setKey THEN @key ELSE col END`): per key, `set<Key>` is 1 and `<key>` the value
 * when present, else 0 and null. One statement then serves every shape of patch.
 */
export function patchParameters<K extends string>(
  keys: readonly K[],
  patch: Partial<Record<K, unknown>>,
): Record<string, unknown> {
  const parameters: Record<string, unknown> = {};
  for (const key of keys) {
    const value = patch[key];
    parameters[`set${key.charAt(0).toUpperCase()}${key.slice(1)}`] = value === undefined ? 0 : 1;
    parameters[key] = value ?? null;
  }
  return parameters;
}

/** A token swap replaces hash and ciphertext together; one without the other would orphan the token. */
export function assertTokenPatchComplete(patch: { tokenHash?: string; tokenCiphertext?: string }): void {
  if ((patch.tokenHash === undefined) !== (patch.tokenCiphertext === undefined)) {
    throw new Error('a user group patch sets tokenHash and tokenCiphertext together or neither');
  }
}

/**
 * The smallest string above every string that starts with `prefix` in code point order (SQLite's
 * BINARY collation, PostgreSQL's "C" collation over UTF-8), or null when no such string exists. Turns
 * a prefix match into a range of plain comparisons, exact for every string (U+10FFFF included), which
 * the unique (workspace_id, environment, provided_id) index can serve whenever a query filters on it alone.
 */
export function prefixUpperBound(prefix: string): string | null {
  const codePoints = Array.from(prefix, (char) => char.codePointAt(0) ?? 0);
  for (let last = codePoints.pop(); last !== undefined; last = codePoints.pop()) {
    if (last < 0x10ffff) {
      // Surrogates never occur in stored text, so the code point after U+D7FF is U+E000.
      codePoints.push(last === 0xd7ff ? 0xe000 : last + 1);
      return String.fromCodePoint(...codePoints);
    }
  }
  return null;
}
