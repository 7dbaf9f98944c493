import {
  assertComputedAccessRulesWithinBound,
  assertMergedPropertiesWithinBound,
  checkedParentTeamId,
  MAX_HIERARCHY_DEPTH,
} from '../domain/user-groups/hierarchy.rules.js';
import type { JsonObject } from '../domain/common.records.js';
import type { UserGroupRecord } from '../domain/user-groups/user-group.records.js';
import type { MergedSizeWrite } from '../domain/user-groups/user-group-patch.rules.js';
import type { AccessRule } from '../domain/access-rules/access-rules.rules.js';
import type { Environment } from '../domain/tenancy.js';
import { LRUCache } from 'lru-cache';

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
  /** The group's own access rules, as stored (JSON text) or parsed; null when it has none. */
  access_rules: StoredAccessRules;
  /** [level, provided_id, properties, mapping pairs or null, team_id, access rules or null] per ancestor, in any order; level 1 is the parent. */
  ancestors: AncestorCell[];
}

export type AncestorCell = [number, string, JsonObject | null, [number, number][] | null, number, StoredAccessRules];

/** A level's access rules as an engine reads them: the column's JSON text (the hot reads), parsed JSON, or null for none. */
export type StoredAccessRules = string | AccessRule[] | null;

/** The most text of distinct rule lists kept parsed (UTF-16 code units): about 1 700 lists of 64 short rules. */
const PARSED_RULES_TEXT = 8 * 1024 * 1024;
/** Texts of the same length and ending kept side by side, compared whole. */
const PARSED_RULES_PER_KEY = 8;
const TEXT_KEY_TAIL = 64;

interface ParsedRules {
  text: string;
  rules: AccessRule[];
}
const parsedRules = new LRUCache<string, ParsedRules[]>({
  maxSize: PARSED_RULES_TEXT,
  sizeCalculation: (entries) => entries.reduce((size, entry) => size + entry.text.length, 0),
});

/**
 * A level's rules, parsed once per distinct stored text and shared, frozen, by every read that brings
 * the same text: a mint then finds the rules' token text already built for that array
 * (access-rules.rules.ts). The text read in this statement is compared whole with the one kept, so a
 * changed row is new text and is never answered from an older read: there is nothing to invalidate.
 * The cache's key is the text's length and ending, not the text: hashing 5 KB of rules on every read
 * costs more (~4 µs) than comparing it whole with the one entry it finds.
 */
export function accessRulesOf(stored: StoredAccessRules): AccessRule[] {
  if (stored === null) return [];
  if (typeof stored !== 'string') return stored;
  const key = `${stored.length}:${stored.slice(-TEXT_KEY_TAIL)}`;
  const entries = parsedRules.get(key);
  const found = entries?.find((entry) => entry.text === stored);
  if (found !== undefined) return found.rules;
  const rules = deepFrozen(JSON.parse(stored) as AccessRule[]);
  parsedRules.set(key, [...(entries ?? []).slice(1 - PARSED_RULES_PER_KEY), { text: stored, rules }]);
  return rules;
}

function deepFrozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) deepFrozen(item);
    Object.freeze(value);
  }
  return value;
}

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
    ancestors: ancestors.map(([, , properties, mapping, teamId, accessRules]) => ({
      teamId: Number(teamId),
      properties,
      mapping: toMapping(mapping ?? []),
      accessRules: accessRulesOf(accessRules),
    })),
    isDemoGroup: row.is_demo_group,
    tags: row.tags,
    accessRules: accessRulesOf(row.access_rules),
    version: row.version,
    tokenGeneration: row.token_generation,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Access rules are stored as JSON text; none is SQL NULL. */
export function serializeAccessRules(rules: AccessRule[]): string | null {
  return rules.length === 0 ? null : JSON.stringify(rules);
}

/** Properties are stored as the JSON text the caller's object serialises to; null stays SQL NULL. */
export function serializeProperties(properties: JsonObject | null): string | null {
  return properties === null ? null : JSON.stringify(properties);
}

/** The row of an engine's parent-link query: [level, team_id] pairs of the would-be parent's chain, and the subtree's height. */
export interface ParentLinkRow {
  chain: [number, number][];
  height: number;
}

/** The parent's team id, once the rule module has checked the link on the facts the engine read (docs/api.md#hierarchy-demo-groups-and-tags). */
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
  /** How many access rules the written group owns (each level's cells end with its count too). */
  own_rules: number | null;
  old_chain: [number, JsonObject | null, number][];
  new_chain: [number, JsonObject | null, number][];
  subtree: [number, number, number, string, JsonObject | null, number][];
}

/** How many access rules a JSON array column holds (NULL: none); the same function on both engines. */
export const RULE_COUNT = (column: string) => `coalesce(json_array_length(${column}), 0)`;

/**
 * The merged-size query's common table expressions, the same text on both engines (PostgreSQL's
 * casts aside): the written group (@teamId, none for a create), its ancestors, the chain from the
 * would-be parent (@parentTeamId) up, and its subtree, each bounded by the depth rule.
 */
export const mergedSizeChains = (cast: { bigint: string }) => `WITH RECURSIVE
  target(team_id, parent_team_id, provided_id, properties, rules) AS (
    SELECT team_id, parent_team_id, provided_id, properties, ${RULE_COUNT('access_rules')} FROM user_groups
      WHERE team_id = @teamId${cast.bigint} AND workspace_id = @workspaceId AND environment = @environment),
  old_chain(team_id, parent_team_id, level, properties, rules) AS (
    SELECT a.team_id, a.parent_team_id, 1, a.properties, ${RULE_COUNT('a.access_rules')} FROM user_groups a JOIN target t ON a.team_id = t.parent_team_id
    UNION ALL
    SELECT a.team_id, a.parent_team_id, c.level + 1, a.properties, ${RULE_COUNT('a.access_rules')} FROM user_groups a JOIN old_chain c ON a.team_id = c.parent_team_id
      WHERE c.level < ${MAX_ANCESTORS}),
  new_chain(team_id, parent_team_id, level, properties, rules) AS (
    SELECT a.team_id, a.parent_team_id, 1, a.properties, ${RULE_COUNT('a.access_rules')} FROM user_groups a WHERE a.team_id = @parentTeamId${cast.bigint}
    UNION ALL
    SELECT a.team_id, a.parent_team_id, c.level + 1, a.properties, ${RULE_COUNT('a.access_rules')} FROM user_groups a JOIN new_chain c ON a.team_id = c.parent_team_id
      WHERE c.level < ${MAX_ANCESTORS}),
  subtree(team_id, parent_team_id, provided_id, level, properties, rules) AS (
    SELECT u.team_id, u.parent_team_id, u.provided_id, 1, u.properties, ${RULE_COUNT('u.access_rules')} FROM user_groups u WHERE u.parent_team_id = @teamId${cast.bigint}
    UNION ALL
    SELECT u.team_id, u.parent_team_id, u.provided_id, s.level + 1, u.properties, ${RULE_COUNT('u.access_rules')} FROM user_groups u JOIN subtree s ON u.parent_team_id = s.team_id
      WHERE s.level < ${MAX_ANCESTORS})`;

/** Asks the rule module (src/domain/user-groups/hierarchy.rules.ts) about the write, on the facts the engine read. */
export function assertMergedSizeFromRow(row: MergedSizeRow, write: MergedSizeWrite): void {
  const levels = <T extends [number, ...unknown[]]>(cells: T[]) => [...cells].sort((a, b) => a[0] - b[0]);
  const chain = (cells: [number, JsonObject | null, number][]) => levels(cells).map(([, properties]) => properties);
  const counts = (cells: [number, JsonObject | null, number][]) => levels(cells).map(([, , rules]) => Number(rules));
  const afterOf = <T>(before: T[], moved: T[]): T[] =>
    write.parentTeamId === undefined ? before : write.parentTeamId === null ? [] : moved;
  const ancestorsBefore = chain(row.old_chain);
  const ancestorsAfter = afterOf(ancestorsBefore, chain(row.new_chain));
  const links = write.parentTeamId !== undefined && write.parentTeamId !== null;
  const providedId = write.providedId ?? row.provided_id ?? '';
  const ownRules = Number(row.own_rules ?? 0);
  const rulesBefore = counts(row.old_chain);
  assertComputedAccessRulesWithinBound({
    providedId,
    field: write.accessRules === undefined ? 'parent_user_group_id' : 'access_rules',
    after: { ancestors: afterOf(rulesBefore, counts(row.new_chain)), own: write.accessRules ?? ownRules },
    ...(write.teamId === undefined
      ? { descendants: [] }
      : {
          teamId: write.teamId,
          before: { ancestors: rulesBefore, own: ownRules },
          descendants: levels(row.subtree).map(([, teamId, parentTeamId, descendant, , rules]) => ({
            teamId: Number(teamId),
            parentTeamId: Number(parentTeamId),
            providedId: descendant,
            own: Number(rules),
          })),
        }),
  });
  assertMergedPropertiesWithinBound({
    providedId,
    links,
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
