import { failure } from '../errors.js';
import type { JsonObject, JsonValue } from '../common.records.js';
import type { MappingEntry, UserGroupRecord } from './user-group.records.js';
import { isTag, MAX_COMPUTED_ACCESS_RULES, MAX_PROPERTIES_BYTES } from '../../wire/contract.constants.js';
import type { AncestorValues } from './user-group.records.js';

/*
 * The rules of a group tree (docs/api.md#hierarchy-demo-groups-and-tags), in one place for both engines: each engine reads the facts
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

type Level = Pick<AncestorValues, 'properties' | 'mapping'>;
type Inheriting = Pick<UserGroupRecord, 'properties' | 'mapping'> & { ancestors: readonly Level[] };

/** Root first, the group itself last: the order in which nearer levels override farther ones. */
function levelsOf(group: Inheriting): Level[] {
  const levels: Level[] = [...group.ancestors].reverse();
  levels.push({ properties: group.properties, mapping: group.mapping });
  return levels;
}

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

/** A group's merged properties weigh at most what its own may (docs/api.md#hierarchy-demo-groups-and-tags): four levels never amplify a read. */
export const MAX_COMPUTED_PROPERTIES_BYTES = MAX_PROPERTIES_BYTES;

/** A group below the written one, as an engine reads it under the tree lock. */
export interface SubtreeMember {
  teamId: number;
  parentTeamId: number;
  providedId: string;
  properties: JsonObject | null;
}

/**
 * What an engine reads, inside the write's transaction and under the tree lock, before a write that
 * can change merged properties: a create under a parent, a change of a group's properties or a link
 * to another parent. The write changes the merge of the written group and of everything below it.
 */
export interface MergedSizeFacts {
  /** The written group's provided id once written; its team id (absent for a group being created). */
  providedId: string;
  teamId?: number;
  /** Whether the write links the group under a (new) parent: then that field is named at fault. */
  links: boolean;
  /** The ancestors' properties before the write, nearest first; absent for a group being created. */
  before?: { ancestors: (JsonObject | null)[]; properties: JsonObject | null };
  after: { ancestors: (JsonObject | null)[]; properties: JsonObject | null };
  /** Every group below the written one, each listed after its parent. */
  descendants: SubtreeMember[];
}

/**
 * Refuses a write that would make some group's merged properties larger than the bound and larger
 * than they were: a group already over it (from before the bound) is not locked out, but cannot grow.
 */
export function assertMergedPropertiesWithinBound(facts: MergedSizeFacts): void {
  const merge = (level: { ancestors: (JsonObject | null)[]; properties: JsonObject | null }) =>
    [...level.ancestors].reverse().concat(level.properties).reduce(withLevel, EMPTY_MERGE);
  const before = new Map<number, SizedMerge | undefined>();
  const after = new Map<number, SizedMerge>();
  const check = (providedId: string, was: SizedMerge | undefined, will: SizedMerge) => {
    const bytes = bytesOf(will);
    if (bytes > MAX_COMPUTED_PROPERTIES_BYTES && bytes > (was ? bytesOf(was) : 0))
      throw failure.computedPropertiesTooLarge(
        facts.links ? 'parent_user_group_id' : 'properties',
        providedId,
        bytes,
        MAX_COMPUTED_PROPERTIES_BYTES,
      );
  };
  const top = { was: facts.before && merge(facts.before), will: merge(facts.after) };
  check(facts.providedId, top.was, top.will);
  if (facts.teamId === undefined) return;
  before.set(facts.teamId, top.was);
  after.set(facts.teamId, top.will);
  for (const { teamId, parentTeamId, providedId, properties } of facts.descendants) {
    const parentWas = before.get(parentTeamId);
    const parentWill = after.get(parentTeamId);
    if (parentWill === undefined) continue;
    const was = parentWas && withLevel(parentWas, properties);
    const will = withLevel(parentWill, properties);
    before.set(teamId, was);
    after.set(teamId, will);
    check(providedId, was, will);
  }
}

/** What the rule-count bound reads of a level: how many rules the group owns. */
export interface RuleCountFacts {
  providedId: string;
  teamId?: number;
  /** The field at fault: the rules when the write sets the group's own, else the link it makes. */
  field: 'access_rules' | 'parent_user_group_id';
  /** Rules owned by the ancestors (nearest first) and by the group, before the write (absent for a create) and after it. */
  before?: { ancestors: number[]; own: number };
  after: { ancestors: number[]; own: number };
  /** Every group below the written one, each listed after its parent. */
  descendants: { teamId: number; parentTeamId: number; providedId: string; own: number }[];
}

/**
 * Refuses a write (a link, a move, a change of rules at any level) that would give some group more
 * effective access rules than the bound (docs/api.md#access-rules) and more than it had; beside the merged-properties
 * bound, on the same facts, under the same tree lock.
 */
export function assertComputedAccessRulesWithinBound(facts: RuleCountFacts): void {
  const total = (level: { ancestors: number[]; own: number }) => level.ancestors.reduce((a, b) => a + b, level.own);
  const check = (providedId: string, was: number, will: number) => {
    if (will > MAX_COMPUTED_ACCESS_RULES && will > was)
      throw failure.computedAccessRulesTooMany(facts.field, providedId, will, MAX_COMPUTED_ACCESS_RULES);
  };
  const top = { was: facts.before ? total(facts.before) : 0, will: total(facts.after) };
  check(facts.providedId, top.was, top.will);
  if (facts.teamId === undefined) return;
  const counts = new Map<number, { was: number; will: number }>([[facts.teamId, top]]);
  for (const { teamId, parentTeamId, providedId, own } of facts.descendants) {
    const parent = counts.get(parentTeamId);
    if (parent === undefined) continue;
    const count = { was: parent.was + own, will: parent.will + own };
    counts.set(teamId, count);
    check(providedId, count.was, count.will);
  }
}

/**
 * A merge as its serialised size, without building it: per key the bytes of `"key":value,`, looked up
 * through the levels below (nearer levels shadow farther ones). Serialised, an object of n entries is
 * `{`, each entry with its comma or closing brace, so n > 0 entries weigh 1 + the sum.
 */
interface SizedMerge {
  readonly entryBytes: (key: string) => number | undefined;
  readonly sum: number;
  readonly count: number;
}

const EMPTY_MERGE: SizedMerge = { entryBytes: () => undefined, sum: 0, count: 0 };

const bytesOf = (merge: SizedMerge) => (merge.count === 0 ? 2 : 1 + merge.sum);

const jsonBytes = (value: JsonValue | string) => Buffer.byteLength(JSON.stringify(value), 'utf8');

function withLevel(below: SizedMerge, properties: JsonObject | null): SizedMerge {
  if (properties === null) return below;
  const own = new Map<string, number>();
  let { sum, count } = below;
  for (const [key, value] of Object.entries(properties)) {
    const bytes = jsonBytes(key) + 1 + jsonBytes(value) + 1;
    const shadowed = below.entryBytes(key);
    if (shadowed === undefined) count += 1;
    else sum -= shadowed;
    sum += bytes;
    own.set(key, bytes);
  }
  return { sum, count, entryBytes: (key) => own.get(key) ?? below.entryBytes(key) };
}

/** Refuses a tag that arrived without a schema (a CLI option) when it is not one: the schemas' own definition (TAG). */
export function assertTag(text: string, field: string): void {
  if (!isTag(text)) throw failure.notATag(field);
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
