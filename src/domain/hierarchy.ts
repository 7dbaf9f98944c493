import { failure } from './errors.js';
import type { JsonObject, MappingEntry, UserGroupRecord } from './models.js';

/*
 * The rules of a group tree (SPEC §11), in one place for both engines: each engine reads the facts
 * inside the write's own transaction (after taking the tenant's tree lock where it needs one) and
 * asks these functions; the merge of inherited values is computed here from the ancestors a read
 * brought along with the group.
 */

/** A root and three levels below it. */
export const MAX_HIERARCHY_DEPTH = 4;

/** What an engine reads, inside the write's transaction, before it links a group to a parent. */
export interface ParentLinkFacts {
  /** The would-be parent and then its ancestors, as team ids, nearest first; empty when the tenant has no such group. */
  parentChain: number[];
  /** The group being linked; absent for a group being created (which has no subtree yet). */
  teamId?: number;
  /** Levels of the group's subtree, itself included: 1 for a leaf or a new group. */
  subtreeHeight: number;
}

/** How far up (and down) an engine must read: one level past the limit tells "too deep" from "just fits". */
export const HIERARCHY_READ_LIMIT = MAX_HIERARCHY_DEPTH + 1;

/** The team id of the parent to link the group under, or the error that link would break. */
export function checkedParentTeamId(parentProvidedId: string, facts: ParentLinkFacts): number {
  if (facts.parentChain.length === 0) throw failure.unknownParent(parentProvidedId);
  if (facts.teamId !== undefined && facts.parentChain.includes(facts.teamId))
    throw failure.hierarchyCycle(parentProvidedId);
  const depth = facts.parentChain.length + facts.subtreeHeight;
  if (depth > MAX_HIERARCHY_DEPTH) throw failure.hierarchyTooDeep(parentProvidedId, depth, MAX_HIERARCHY_DEPTH);
  return facts.parentChain[0] as number;
}

type Inheriting = Pick<UserGroupRecord, 'properties' | 'mapping' | 'ancestors'>;

/** Root first, the group itself last: the order in which nearer levels override farther ones. */
const levelsOf = (group: Inheriting) =>
  [...group.ancestors].reverse().concat({ properties: group.properties, mapping: group.mapping });

/** The properties of every level merged key by key (top-level keys only), the nearer level winning; `{}` when none has any. */
export function computedProperties(group: Inheriting): JsonObject {
  // A root (most groups) computes to its own properties: no merge on the hot path.
  if (group.ancestors.length === 0) return group.properties ?? {};
  // A Map, then fromEntries: own properties only, whatever a key is called.
  const merged = new Map<string, JsonObject[string]>();
  for (const { properties } of levelsOf(group))
    for (const [key, value] of Object.entries(properties ?? {})) merged.set(key, value);
  return Object.fromEntries(merged);
}

/** The mapping of every level merged schema by schema, the nearer level winning; sorted by schema id. */
export function computedMapping(group: Inheriting): MappingEntry[] {
  if (group.ancestors.length === 0) return group.mapping;
  const bySchema = new Map<number, MappingEntry>();
  for (const { mapping } of levelsOf(group)) for (const entry of mapping) bySchema.set(entry.schemaId, entry);
  return [...bySchema.values()].sort((a, b) => a.schemaId - b.schemaId);
}

/** Tags as stored and shown: in code point order (the order of both engines' binary collation). */
export function sortedTags(tags: readonly string[]): string[] {
  return [...tags].sort(compareCodePoints);
}

function compareCodePoints(a: string, b: string): number {
  const left = Array.from(a);
  const right = Array.from(b);
  for (let i = 0; i < Math.min(left.length, right.length); i += 1) {
    const difference = (left[i]?.codePointAt(0) ?? 0) - (right[i]?.codePointAt(0) ?? 0);
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}
