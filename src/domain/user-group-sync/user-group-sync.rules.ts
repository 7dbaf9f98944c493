import { atPosition, failure, type InputPosition } from '../errors.js';
import { checkedParentTeamId, HIERARCHY_READ_LIMIT } from '../user-groups/hierarchy.rules.js';
import type { FieldChanges } from '../audit/audit.records.js';
import type { JsonObject, Timestamp } from '../common.records.js';
import type { MappingEntry, NewUserGroup, UserGroupRecord } from '../user-groups/user-group.records.js';
import type { Tenant } from '../tenancy.js';
import type { AccessRule } from '../access-rules/access-rule.records.js';
import { diffUserGroup, wholeGroupChanges } from '../user-groups/user-group-diff.rules.js';
import { batchWriteFailure } from '../user-groups/user-groups.rules.js';
import type { UserGroupWrite } from '../user-groups/user-groups.port.js';
import { MAX_SYNC_GROUPS } from '../../wire/contract.constants.js';
import type { UserGroupLink } from './user-group-sync.port.js';

/*
 * The plan of a sync (docs/api.md#sync-tenants-as-code): given the desired state of many groups, read from a file, and the
 * groups of the tenant as they are, which groups to create, update, leave alone or (when pruning a
 * tag) delete, in which order, and with which audit changes. Pure: the service reads the facts, the
 * engines apply the steps in one transaction.
 */

/** One group as a line of the file wants it; an absent field leaves the group's value as it is. */
export interface DesiredUserGroup {
  providedId: string;
  name?: string;
  /** Null: a root. */
  parentProvidedId?: string | null;
  properties?: JsonObject | null;
  /** Resolved; a null in the file clears (empty). */
  mapping?: MappingEntry[];
  /** Sorted; a null in the file clears (empty). */
  tags?: string[];
  /** A null in the file clears (false). */
  isDemoGroup?: boolean;
  /** Checked; a null in the file clears (none). */
  accessRules?: AccessRule[];
}

export interface DesiredLine {
  at: InputPosition;
  group: DesiredUserGroup;
}

/** The tenant's groups a plan depends on, as the service read them. */
export interface SyncFacts {
  tenant: Tenant;
  /** The existing groups the file names, as groups or as parents. */
  named: UserGroupRecord[];
  /** When pruning: the groups carrying the tag that the file leaves out (at most the sync bound). */
  pruned: UserGroupRecord[];
  /**
   * The stored groups below what the apply moves or deletes: the subtrees of the groups the file
   * links to another parent (`movedGroups`), down to the depth rule, and the children of the pruned.
   */
  below: UserGroupLink[];
}

export type SyncAction = 'create' | 'update' | 'unchanged' | 'delete';

/** One group of the plan, as the caller sees it. */
export interface SyncPlanItem {
  action: SyncAction;
  providedId: string;
  /** Null for a group still to be created. */
  teamId: number | null;
  /** The line (or index) of the file; null for a group the file leaves out (a delete). */
  at: InputPosition | null;
  /** For update: the changed fields, before and after; create and delete: every field. Never a token. */
  changes: FieldChanges | null;
}

/** A create before its token: the service adds one when (and only when) it applies. */
export type TokenlessGroup = Omit<NewUserGroup, 'tokenHash' | 'tokenCiphertext'>;

/** One write of the apply, in the order the engine runs them (applyUserGroupWrites, all or nothing). */
export type SyncStep<Group = TokenlessGroup> = UserGroupWrite<Group>;

export interface SyncPlan {
  /** In file order, then the deletes. */
  items: SyncPlanItem[];
  /** Creates and updates parents first, then deletes children first. */
  steps: SyncStep[];
}

export interface SyncSummary {
  create: number;
  update: number;
  unchanged: number;
  delete: number;
}

export function summaryOf(items: SyncPlanItem[]): SyncSummary {
  const summary: SyncSummary = { create: 0, update: 0, unchanged: 0, delete: 0 };
  for (const item of items) summary[item.action] += 1;
  return summary;
}

/** A prune deletes at most as many groups as a sync may write: counted before any group is read in full. */
export function assertPruneWithinBound(tag: string, count: number): void {
  if (count > MAX_SYNC_GROUPS) throw failure.syncPruneTooLarge(tag, MAX_SYNC_GROUPS);
}

/** The existing groups the file links to another parent: their stored subtrees move with them. */
export function movedGroups(lines: DesiredLine[], named: UserGroupRecord[]): UserGroupRecord[] {
  const existing = new Map(named.map((group) => [group.providedId, group]));
  return lines.flatMap(({ group }) => {
    const current = existing.get(group.providedId);
    const moves =
      current !== undefined &&
      group.parentProvidedId !== undefined &&
      group.parentProvidedId !== current.parentProvidedId;
    return moves ? [current] : [];
  });
}

/**
 * Decides the plan, or throws the refusal of the first line at fault (naming its line): a group named
 * twice, a parent that neither exists nor is in the file, a prune that would delete the parent of a
 * group that stays, a cycle in the tree the file asks for; then, step by step in the apply's order, the
 * tree check each write meets in the engine (`checkedParentTeamId`: cycle, depth with the moved
 * group's stored subtree) on the tree as the steps before it leave it: the plan refuses exactly what
 * the apply would, at the same line.
 */
export function planUserGroupSync(
  lines: DesiredLine[],
  facts: SyncFacts,
  options: { pruneTag?: string; now: Timestamp },
): SyncPlan {
  if (lines.length > MAX_SYNC_GROUPS) throw failure.syncTooLarge(MAX_SYNC_GROUPS);
  if (options.pruneTag !== undefined) assertPruneWithinBound(options.pruneTag, facts.pruned.length);
  const existing = new Map(facts.named.map((group) => [group.providedId, group]));
  const inFile = new Map<string, DesiredLine>();
  for (const line of lines) {
    const first = inFile.get(line.group.providedId);
    if (first) throw atPosition(failure.syncDuplicate(line.group.providedId, first.at), line.at);
    inFile.set(line.group.providedId, line);
  }

  // Pruning deletes the tagged groups the file leaves out, and nothing else.
  const pruned = options.pruneTag === undefined ? [] : facts.pruned.filter((group) => !inFile.has(group.providedId));
  const prunedIds = new Set(pruned.map((group) => group.providedId));

  /** The parent a group will have once applied: the file's word, else as it is. */
  const finalParent = (providedId: string): string | null | undefined => {
    const line = inFile.get(providedId);
    if (line && line.group.parentProvidedId !== undefined) return line.group.parentProvidedId;
    return existing.get(providedId)?.parentProvidedId ?? (line ? null : undefined);
  };

  const tree = storedTree(facts, lines);
  for (const line of lines) {
    const parent = finalParent(line.group.providedId);
    if (parent === null || parent === undefined) continue;
    if (!inFile.has(parent) && !existing.has(parent)) throw atPosition(failure.unknownParent(parent), line.at);
    if (prunedIds.has(parent)) throw atPosition(failure.syncPrunesParent(parent, line.group.providedId), line.at);
    if (tree.cycles(line.group.providedId, parent)) throw atPosition(failure.hierarchyCycle(parent), line.at);
  }

  const items: SyncPlanItem[] = [];
  const writes: Array<{ step: SyncStep; depth: number; order: number }> = [];
  const depthInFile = depthsWithin(inFile, finalParent);
  lines.forEach((line, order) => {
    const current = existing.get(line.group.providedId);
    const planned = current
      ? planUpdate(line, current, facts.tenant, options.now)
      : planCreate(line, facts.tenant, options.now);
    items.push({
      action: planned ? (current ? 'update' : 'create') : 'unchanged',
      providedId: line.group.providedId,
      teamId: current?.teamId ?? null,
      at: line.at,
      changes: planned?.changes ?? null,
    });
    if (planned) writes.push({ step: planned, depth: depthInFile.get(line.group.providedId) ?? 0, order });
  });
  writes.sort((a, b) => a.depth - b.depth || a.order - b.order);
  for (const { step } of writes) {
    try {
      tree.write(step);
    } catch (error) {
      throw batchWriteFailure(step, error);
    }
  }

  // Children before parents: the deepest first (a group's ancestors, as read, tell its depth).
  const deletes = [...pruned].sort((a, b) => b.ancestors.length - a.ancestors.length || a.teamId - b.teamId);
  const deleteSteps = deletes.map((group): SyncStep => {
    tree.remove(group);
    const changes = wholeGroupChanges(group, false);
    items.push({ action: 'delete', providedId: group.providedId, teamId: group.teamId, at: null, changes });
    return {
      kind: 'delete',
      tenant: facts.tenant,
      teamId: group.teamId,
      providedId: group.providedId,
      expectedVersion: group.version,
      changes,
    };
  });
  return { items, steps: [...writes.map(({ step }) => step), ...deleteSteps] };
}

/**
 * The tenant's tree as far as the plan needs it, keyed by team id (a group still to be created by a
 * negative key of its own): the named groups and their stored ancestors, the stored groups below what
 * moves or goes. `write` and `remove` check each step as the engine will (`checkedParentTeamId`, a
 * delete's children) on the tree the steps before it left, then make the change. Each check walks at
 * most the depth rule's levels up and the moved group's own subtree down: linear in the file.
 */
function storedTree(facts: SyncFacts, lines: DesiredLine[]) {
  const parentOf = new Map<number, number | null>();
  const childrenOf = new Map<number, Set<number>>();
  const providedIdOf = new Map<number, string>();
  const keyOf = new Map<string, number>();
  const link = (key: number, parent: number | null) => {
    const before = parentOf.get(key);
    if (before !== undefined && before !== null) childrenOf.get(before)?.delete(key);
    parentOf.set(key, parent);
    if (parent === null) return;
    const children = childrenOf.get(parent) ?? new Set<number>();
    childrenOf.set(parent, children);
    children.add(key);
  };
  const known = (key: number, providedId: string, parent: number | null) => {
    providedIdOf.set(key, providedId);
    keyOf.set(providedId, key);
    if (!parentOf.has(key)) link(key, parent);
  };
  for (const group of [...facts.named, ...facts.pruned]) {
    known(group.teamId, group.providedId, group.ancestors[0]?.teamId ?? null);
    group.ancestors.forEach((ancestor, level) => {
      if (!parentOf.has(ancestor.teamId)) link(ancestor.teamId, group.ancestors[level + 1]?.teamId ?? null);
    });
  }
  for (const below of facts.below) known(below.teamId, below.providedId, below.parentTeamId);

  // The groups the file creates, by a key no team id has; known once their create is planned.
  const newKeys = new Map(lines.map(({ group }, index) => [group.providedId, -(index + 1)]));
  const fileParents = new Map(lines.map(({ group }) => [group.providedId, group.parentProvidedId]));

  /** The chain up from `key`, nearest first, as far as the engine reads it. */
  const chainFrom = (key: number | undefined): number[] => {
    const chain: number[] = [];
    for (let at = key; at !== undefined && chain.length < HIERARCHY_READ_LIMIT;) {
      chain.push(at);
      at = parentOf.get(at) ?? undefined;
    }
    return chain;
  };
  /** Levels of the subtree under `key`, itself included, as far as the engine reads it. */
  const heightOf = (key: number): number => {
    let level = [key];
    let height = 1;
    for (; height < HIERARCHY_READ_LIMIT; height += 1) {
      level = level.flatMap((at) => [...(childrenOf.get(at) ?? [])]);
      if (level.length === 0) break;
    }
    return height;
  };

  return {
    /** Whether linking `providedId` under `parent` closes a loop once every line is applied. */
    cycles(providedId: string, parent: string): boolean {
      const finalParentKey = (key: number): number | undefined => {
        const id = key < 0 ? lines[-key - 1]?.group.providedId : providedIdOf.get(key);
        const fromFile = id === undefined ? undefined : fileParents.get(id);
        if (fromFile === undefined) return parentOf.get(key) ?? undefined;
        return fromFile === null ? undefined : (keyOf.get(fromFile) ?? newKeys.get(fromFile));
      };
      const self = keyOf.get(providedId) ?? newKeys.get(providedId);
      let at = keyOf.get(parent) ?? newKeys.get(parent);
      for (let steps = 0; at !== undefined && steps <= HIERARCHY_READ_LIMIT; steps += 1) {
        if (at === self) return true;
        at = finalParentKey(at);
      }
      return false;
    },
    write(step: SyncStep): void {
      if (step.kind === 'delete') return;
      const { providedId, parent, key, created } =
        step.kind === 'create'
          ? {
              providedId: step.group.providedId,
              parent: step.group.parentProvidedId,
              key: newKeys.get(step.group.providedId)!,
              created: true,
            }
          : {
              providedId: providedIdOf.get(step.update.teamId)!,
              parent: step.update.patch.parentProvidedId,
              key: step.update.teamId,
              created: false,
            };
      if (created) {
        providedIdOf.set(key, providedId);
        keyOf.set(providedId, key);
      }
      if (parent === undefined) return;
      if (parent === null) return link(key, null);
      const parentChain = chainFrom(keyOf.get(parent));
      checkedParentTeamId(parent, {
        parentChain,
        ...(created ? {} : { teamId: key }),
        subtreeHeight: created ? 1 : heightOf(key),
      });
      link(key, parentChain[0]!);
    },
    remove(group: UserGroupRecord): void {
      const [child] = childrenOf.get(group.teamId) ?? [];
      if (child !== undefined)
        throw failure.syncPrunesParent(group.providedId, providedIdOf.get(child) ?? String(child));
      link(group.teamId, null);
    },
  };
}

function planCreate(line: DesiredLine, tenant: Tenant, now: Timestamp): SyncStep | null {
  const { group } = line;
  const content = {
    providedId: group.providedId,
    name: group.name ?? group.providedId,
    properties: group.properties ?? null,
    mapping: group.mapping ?? [],
    parentProvidedId: group.parentProvidedId ?? null,
    isDemoGroup: group.isDemoGroup ?? false,
    tags: group.tags ?? [],
    accessRules: group.accessRules ?? [],
  };
  return {
    kind: 'create',
    at: line.at,
    group: { tenant, ...content, createdAt: now },
    changes: wholeGroupChanges(content, true),
  };
}

function planUpdate(line: DesiredLine, current: UserGroupRecord, tenant: Tenant, now: Timestamp): SyncStep | null {
  const { group } = line;
  const { patch, changes } = diffUserGroup(current, {
    ...(group.name !== undefined ? { name: group.name } : {}),
    ...(group.properties !== undefined ? { properties: group.properties } : {}),
    ...(group.mapping !== undefined ? { mapping: group.mapping } : {}),
    ...(group.parentProvidedId !== undefined ? { parentProvidedId: group.parentProvidedId } : {}),
    ...(group.isDemoGroup !== undefined ? { isDemoGroup: group.isDemoGroup } : {}),
    ...(group.tags !== undefined ? { tags: group.tags } : {}),
    ...(group.accessRules !== undefined ? { accessRules: group.accessRules } : {}),
  });
  if (Object.keys(changes).length === 0) return null;
  return {
    kind: 'update',
    at: line.at,
    update: { tenant, teamId: current.teamId, expectedVersion: current.version, patch, updatedAt: now },
    changes,
  };
}

/** How many of a file group's ancestors are in the file too: a parent is written before its children. */
function depthsWithin(
  inFile: Map<string, DesiredLine>,
  finalParent: (providedId: string) => string | null | undefined,
): Map<string, number> {
  const depths = new Map<string, number>();
  for (const providedId of inFile.keys()) {
    let depth = 0;
    for (
      let at = finalParent(providedId);
      at !== null && at !== undefined && inFile.has(at) && depth < HIERARCHY_READ_LIMIT;
      at = finalParent(at)
    )
      depth += 1;
    depths.set(providedId, depth);
  }
  return depths;
}

/** The patch fields an update may change and still be written together with other steps (`syncWriteRuns`). */
const TREE_NEUTRAL_PATCH_KEYS: ReadonlySet<string> = new Set(['name', 'isDemoGroup', 'tags', 'mapping']);

type CreateStep<Group> = Extract<SyncStep<Group>, { kind: 'create' }>;
type UpdateStep<Group> = Extract<SyncStep<Group>, { kind: 'update' }>;

/**
 * Consecutive steps an engine may write with one statement per kind (docs/performance-history.md), or a step it writes on its
 * own. A run's steps depend on nothing another step of the run writes, so writing them together, its
 * updates first, leaves what writing them one by one in the plan's order would leave:
 * - a create reads its parent's chain (the tree, merged properties and rules): it joins a run unless
 *   its parent is created in that run;
 * - an update joins when it changes none of what a check or another step reads (name, demo flag,
 *   tags, mapping: no parent, properties, rules, provided id or token), and the creates of the run
 *   show its mapping among their ancestors' as they would after it;
 * - a delete, or any other update, is a run of its own, in its place.
 */
export type SyncRun<Group> =
  | { kind: 'batch'; updates: UpdateStep<Group>[]; creates: CreateStep<Group>[]; steps: SyncStep<Group>[] }
  | { kind: 'single'; step: SyncStep<Group> };

export function syncWriteRuns<Group extends { providedId: string; parentProvidedId: string | null }>(
  steps: SyncStep<Group>[],
  maxRun: number,
): SyncRun<Group>[] {
  const runs: SyncRun<Group>[] = [];
  let batch: Extract<SyncRun<Group>, { kind: 'batch' }> | undefined;
  let created = new Set<string>();
  const close = () => {
    if (batch) runs.push(batch);
    batch = undefined;
    created = new Set();
  };
  for (const step of steps) {
    const batched =
      step.kind === 'create' ||
      (step.kind === 'update' &&
        Object.entries(step.update.patch).every(
          ([key, value]) => value === undefined || TREE_NEUTRAL_PATCH_KEYS.has(key),
        ));
    if (!batched) {
      close();
      runs.push({ kind: 'single', step });
      continue;
    }
    const dependsOnRun =
      step.kind === 'create' && step.group.parentProvidedId !== null && created.has(step.group.parentProvidedId);
    if (batch && (dependsOnRun || batch.steps.length >= maxRun)) close();
    batch ??= { kind: 'batch', updates: [], creates: [], steps: [] };
    batch.steps.push(step);
    if (step.kind === 'create') {
      batch.creates.push(step);
      created.add(step.group.providedId);
    } else if (step.kind === 'update') batch.updates.push(step);
  }
  close();
  return runs;
}
