import { checkedParentTeamId, MAX_HIERARCHY_DEPTH } from '../domain/hierarchy.js';
import type { JsonObject, UserGroupRecord } from '../domain/models.js';
import type { Environment } from '../domain/tenancy.js';
import type { UserGroupQuery } from './store.js';

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
