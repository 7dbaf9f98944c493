import type { AuditEntry } from '../audit/audit-entry.js';
import { atPosition, failure, isAppError, type AppError, type InputPosition } from '../errors.js';
import { MAX_HIERARCHY_DEPTH } from '../user-groups/hierarchy.rules.js';
import type { FieldChanges } from '../audit/audit.records.js';
import type { JsonObject, Timestamp } from '../common.records.js';
import type { MappingEntry, NewUserGroup, UserGroupRecord } from '../user-groups/user-group.records.js';
import type { Tenant } from '../tenancy.js';
import type { AccessRule } from '../access-rules/access-rule.records.js';
import { diffUserGroup, wholeGroupChanges } from '../user-groups/user-group-diff.rules.js';
import { groupAudit, groupEntry, type GroupIdentity } from '../user-groups/user-groups.rules.js';
import type { UserGroupUpdate } from '../user-groups/user-groups.port.js';
import { MAX_SYNC_GROUPS } from '../../wire/contract.constants.js';

/*
 * The plan of a sync (SPEC §16): given the desired state of many groups, read from a file, and the
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
  /** When pruning: every group carrying the tag. */
  tagged: UserGroupRecord[];
  /** When pruning: the children of the tagged groups the file leaves out. */
  childrenOfPruned: UserGroupRecord[];
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

/** One write of the apply, in the order the engine runs them. */
export type SyncStep<Group = TokenlessGroup> =
  | { kind: 'create'; at: InputPosition; group: Group; changes: FieldChanges }
  | { kind: 'update'; at: InputPosition; update: UserGroupUpdate; changes: FieldChanges }
  | {
      kind: 'delete';
      tenant: Tenant;
      teamId: number;
      providedId: string;
      expectedVersion: number;
      changes: FieldChanges;
    };

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

/**
 * Decides the plan, or throws the refusal of the first line at fault (naming its line): a group named
 * twice, a parent that neither exists nor is in the file, a cycle or a tree too deep within what the
 * file and the tenant say, a prune that would delete the parent of a group that stays.
 */
export function planUserGroupSync(
  lines: DesiredLine[],
  facts: SyncFacts,
  options: { pruneTag?: string; now: Timestamp },
): SyncPlan {
  if (lines.length > MAX_SYNC_GROUPS) throw failure.syncTooLarge(MAX_SYNC_GROUPS);
  const existing = new Map(facts.named.map((group) => [group.providedId, group]));
  const inFile = new Map<string, DesiredLine>();
  for (const line of lines) {
    const first = inFile.get(line.group.providedId);
    if (first) throw atPosition(failure.syncDuplicate(line.group.providedId, first.at), line.at);
    inFile.set(line.group.providedId, line);
  }

  // Pruning deletes the tagged groups the file leaves out, and nothing else.
  const pruned = options.pruneTag === undefined ? [] : facts.tagged.filter((group) => !inFile.has(group.providedId));
  const prunedIds = new Set(pruned.map((group) => group.providedId));

  /** The parent a group will have once applied: the file's word, else as it is. */
  const finalParent = (providedId: string): string | null | undefined => {
    const line = inFile.get(providedId);
    if (line && line.group.parentProvidedId !== undefined) return line.group.parentProvidedId;
    return existing.get(providedId)?.parentProvidedId ?? (line ? null : undefined);
  };

  for (const line of lines) {
    const parent = finalParent(line.group.providedId);
    if (parent === null || parent === undefined) continue;
    if (!inFile.has(parent) && !existing.has(parent)) throw atPosition(failure.unknownParent(parent), line.at);
    if (prunedIds.has(parent)) throw atPosition(failure.syncPrunesParent(parent, line.group.providedId), line.at);
    assertTreeHolds(line, parent, finalParent, existing, inFile);
  }
  for (const child of facts.childrenOfPruned) {
    if (inFile.has(child.providedId) || prunedIds.has(child.providedId)) continue;
    if (child.parentProvidedId !== null && prunedIds.has(child.parentProvidedId))
      throw failure.syncPrunesParent(child.parentProvidedId, child.providedId);
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

  // Children before parents: the deepest first (a group's ancestors, as read, tell its depth).
  const deletes = [...pruned].sort((a, b) => b.ancestors.length - a.ancestors.length || a.teamId - b.teamId);
  for (const group of deletes) {
    const changes = wholeGroupChanges(group, false);
    items.push({ action: 'delete', providedId: group.providedId, teamId: group.teamId, at: null, changes });
  }
  return {
    items,
    steps: [
      ...writes.map(({ step }) => step),
      ...deletes.map((group): SyncStep => ({
        kind: 'delete',
        tenant: facts.tenant,
        teamId: group.teamId,
        providedId: group.providedId,
        expectedVersion: group.version,
        changes: wholeGroupChanges(group, false),
      })),
    ],
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

/**
 * Walks up from the line's group through the parents it will have: back to itself is a cycle; more
 * levels than the tree may have is too deep. Above the file, a stored group's depth is its ancestors'
 * count. (The engines check the tree again as they write, for what the file cannot see.)
 */
function assertTreeHolds(
  line: DesiredLine,
  parent: string,
  finalParent: (providedId: string) => string | null | undefined,
  existing: Map<string, UserGroupRecord>,
  inFile: Map<string, DesiredLine>,
): void {
  let levels = 1;
  for (let at: string | null | undefined = parent; at !== null && at !== undefined; at = finalParent(at)) {
    if (at === line.group.providedId) throw atPosition(failure.hierarchyCycle(parent), line.at);
    levels += 1;
    if (!inFile.has(at)) {
      levels += existing.get(at)?.ancestors.length ?? 0;
      break;
    }
    if (levels > MAX_HIERARCHY_DEPTH + 1) break;
  }
  if (levels > MAX_HIERARCHY_DEPTH)
    throw atPosition(failure.hierarchyTooDeep(parent, levels, MAX_HIERARCHY_DEPTH), line.at);
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
      at !== null && at !== undefined && inFile.has(at) && depth <= MAX_HIERARCHY_DEPTH;
      at = finalParent(at)
    )
      depth += 1;
    depths.set(providedId, depth);
  }
  return depths;
}

/**
 * The audit entry of one step, given what the engine wrote; a step that wrote nothing (the group was
 * created, changed or deleted since the plan was made) refuses the whole sync, which then rolls back.
 */
export function syncStepEntry(
  step: SyncStep<unknown>,
  written: GroupIdentity | null | undefined,
  read: () => UserGroupRecord,
): AuditEntry {
  if (!written) throw syncStepLost(step);
  const action =
    step.kind === 'create'
      ? 'user_group.created'
      : step.kind === 'update'
        ? 'user_group.updated'
        : 'user_group.deleted';
  return groupEntry(groupAudit(action, step.changes), written, read);
}

/** The refusal of a step that found its row created, changed or deleted since the plan was made. */
export function syncStepLost(step: SyncStep<unknown>): AppError {
  return step.kind === 'create'
    ? failure.batchGroupCreated((step.group as { providedId: string }).providedId)
    : failure.batchGroupChanged(step.kind === 'update' ? step.update.teamId : step.teamId);
}

/** A step's refusal as the caller sees it: naming the file's line, when the step has one. */
export function syncStepFailure(step: SyncStep<unknown>, error: unknown): unknown {
  return isAppError(error) && step.kind !== 'delete' ? atPosition(error, step.at) : error;
}

/** The patch fields an update may change and still be written together with other steps (`syncWriteRuns`). */
const TREE_NEUTRAL_PATCH_KEYS: ReadonlySet<string> = new Set(['name', 'isDemoGroup', 'tags', 'mapping']);

type CreateStep<Group> = Extract<SyncStep<Group>, { kind: 'create' }>;
type UpdateStep<Group> = Extract<SyncStep<Group>, { kind: 'update' }>;

/**
 * Consecutive steps an engine may write with one statement per kind (D415), or a step it writes on its
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
