import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { atPosition, failure, isAppError, type InputPosition } from '../errors.js';
import { sortedTags } from '../user-groups/hierarchy.rules.js';
import type { Keyring } from '../encryption-keys/keyring.js';
import { createMappingResolver, type MappingInput } from '../user-groups/mapping.js';
import type { JsonObject } from '../common.records.js';
import type { NewUserGroup, UserGroupRecord } from '../user-groups/user-group.records.js';
import { assertPropertiesWithinLimits } from '../user-groups/properties.rules.js';
import { assertSchemasExist, checkedAccessRules } from '../access-rules/access-rules.rules.js';
import { knownRuleSchemas } from '../access-rules/access-rule-schemas.js';
import { requireScope } from '../api-tokens/scopes.js';
import { generateUserGroupToken, hashSecret } from '../secrets.js';
import type { Caller, Tenant } from '../tenancy.js';
import { parentProvidedIdOf, providedIdOf } from '../user-groups/user-groups.service.js';
import type { DataSourceStore } from '../data-sources/data-sources.port.js';
import type { SchemaStore } from '../schemas/schemas.port.js';
import type { Store } from '../store.port.js';
import type { UserGroupStore } from '../user-groups/user-groups.port.js';
import type { SyncAuditContext, SyncWrite, UserGroupSyncStore } from './user-group-sync.port.js';
import { MAX_SYNC_GROUPS } from '../../wire/contract.constants.js';
import { assertTag, HIERARCHY_READ_LIMIT } from '../user-groups/hierarchy.rules.js';
import type { UserGroupLink } from './user-group-sync.port.js';
import {
  assertPruneWithinBound,
  movedGroups,
  planUserGroupSync,
  summaryOf,
  type DesiredLine,
  type SyncFacts,
  type SyncPlanItem,
  type SyncSummary,
} from './user-group-sync.rules.js';

/** One line of a sync file as the wire read it: a field absent is undefined, a null clears. */
export interface SyncLineInput {
  userGroupId: string | number;
  name?: string;
  parentUserGroupId?: string | number | null;
  properties?: JsonObject | null;
  mapping?: MappingInput | null;
  tags?: string[] | null;
  isDemoGroup?: boolean | null;
  /** Checked by the domain (checkedAccessRules); null or [] clears. */
  accessRules?: unknown[] | null;
}

export interface SyncOptions {
  dryRun: boolean;
  /** Also delete the groups carrying this tag that the file leaves out. */
  pruneTag?: string;
  /** Told when the apply starts (after the plan), with how many steps it writes. */
  onApply?: (steps: number) => void;
  /**
   * Aborted when the caller has gone (its client closed the connection): the sync stops between two
   * reads of its plan, or before its apply (PostgreSQL: between two statements of it, rolled back),
   * and writes nothing.
   */
  signal?: AbortSignal;
}

export interface SyncResult {
  /** `sync_…`: marks every audit event and webhook event of the apply. */
  id: string;
  dryRun: boolean;
  /** Whether anything was written (false for a dry run and for a plan of nothing). */
  applied: boolean;
  summary: SyncSummary;
  items: SyncPlanItem[];
}

type SyncServiceStore = Pick<UserGroupStore, 'findUserGroupsByProvidedIds' | 'applyUserGroupWrites'> &
  UserGroupSyncStore &
  Pick<SchemaStore, 'findSchemasByIds'> &
  Pick<DataSourceStore, 'findDataSources'> &
  Pick<Store, 'refreshStatistics'>;

/** Reads of many ids go to the store in chunks of this many. */
const READ_CHUNK = 1000;
/** The tagged groups a prune counts are read this many links at a time. */
const LINK_CHUNK = 5000;
/** A plan that lost to a concurrent change (another process's sync or a single write) is made again, at most this often. */
const MAX_APPLY_ATTEMPTS = 3;
/** After an apply that wrote this many groups, the planner's statistics are refreshed (ANALYZE on PostgreSQL). */
const STATISTICS_AFTER = 1000;

export type UserGroupSyncService = ReturnType<typeof createUserGroupSyncService>;

/**
 * Tenants as code (docs/api.md#sync-tenants-as-code): the desired state of many groups in, a plan out, applied unless a dry
 * run, all or nothing. Syncs of one tenant in this process queue behind each other; across processes
 * the store's lock orders the applies, and a plan another apply made stale is made again. The plan's
 * reads are linear in the file and the pruned tag, and between two of them the event loop runs other
 * requests (and signals): a sync whose client has gone, or one in progress when the server stops
 * (`stop`), ends there with nothing written.
 */
export function createUserGroupSyncService({
  store,
  cipher,
  clock,
  warn,
}: {
  store: SyncServiceStore;
  cipher: Keyring;
  clock: Clock;
  warn: (message: string) => void;
}) {
  const queues = new Map<string, Promise<unknown>>();

  /** Runs `work` after every earlier sync of the tenant in this process has finished. */
  function queued<T>(tenant: Tenant, work: () => Promise<T>): Promise<T> {
    const key = `${tenant.workspaceId}.${tenant.environment}`;
    const previous = queues.get(key) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.catch(() => undefined);
    queues.set(key, tail);
    void tail.then(() => {
      if (queues.get(key) === tail) queues.delete(key);
    });
    return run;
  }

  const inFlight = new Set<AbortController>();
  let stopped = false;

  /** The server is shutting down: every sync in progress stops at its next step, and new ones are refused. */
  function stop(): void {
    stopped = true;
    for (const controller of inFlight) controller.abort();
  }

  async function sync(
    caller: Caller,
    lines: Array<{ at: InputPosition; group: SyncLineInput }>,
    options: SyncOptions,
  ): Promise<SyncResult> {
    requireScope(caller, 'admin');
    if (lines.length > MAX_SYNC_GROUPS) throw failure.syncTooLarge(MAX_SYNC_GROUPS);
    // Aborted by the server's stop or by the caller's signal, whichever comes first.
    const controller = new AbortController();
    const abort = () => controller.abort();
    if (stopped || options.signal?.aborted) abort();
    options.signal?.addEventListener('abort', abort, { once: true });
    inFlight.add(controller);
    try {
      return await syncUntilStopped(caller, lines, options, controller.signal);
    } finally {
      inFlight.delete(controller);
      options.signal?.removeEventListener('abort', abort);
    }
  }

  async function syncUntilStopped(
    caller: Caller,
    lines: Array<{ at: InputPosition; group: SyncLineInput }>,
    options: SyncOptions,
    signal: AbortSignal,
  ): Promise<SyncResult> {
    await checkpoint(signal);
    if (options.pruneTag !== undefined) assertTag(options.pruneTag, 'prune');
    const desired = await desiredLines(caller.tenant, lines);
    const id = `sync_${randomBytes(12).toString('hex')}`;
    const plan = async () => {
      const facts = await readFacts(caller.tenant, desired, options.pruneTag, signal);
      const planned = planUserGroupSync(desired, facts, { pruneTag: options.pruneTag, now: clock() });
      await checkpoint(signal);
      return planned;
    };
    if (options.dryRun) {
      const { items } = await plan();
      return { id, dryRun: true, applied: false, summary: summaryOf(items), items };
    }
    return queued(caller.tenant, async () => {
      for (let attempt = 1; ; attempt += 1) {
        const { items, steps } = await plan();
        const result = { id, dryRun: false, summary: summaryOf(items), items };
        if (steps.length === 0) return { ...result, applied: false };
        options.onApply?.(steps.length);
        // The last moment to stop on every engine (SQLite's apply is one synchronous call).
        if (signal.aborted) throw failure.syncStopped();
        try {
          const audit: SyncAuditContext = { at: clock(), actor: caller.actor, requestId: caller.requestId, syncId: id };
          await store.applyUserGroupWrites(caller.tenant, steps.map(withToken), audit, {
            policy: 'all_or_nothing',
            signal,
          });
        } catch (error) {
          // Another writer got there between the plan and the apply: plan again on what it left.
          if (isAppError(error) && error.code === 'concurrent_change') {
            if (attempt < MAX_APPLY_ATTEMPTS) continue;
            throw failure.syncPlanMoved();
          }
          throw error;
        }
        // A bulk load changes what the planner should expect of the tables (docs/performance.md).
        if (steps.length >= STATISTICS_AFTER) (await store.refreshStatistics()).forEach(warn);
        return { ...result, applied: true };
      }
    });
  }

  /** A create gets its token as it is applied: never part of the desired state, never in the plan. */
  function withToken(step: ReturnType<typeof planUserGroupSync>['steps'][number]): SyncWrite {
    if (step.kind !== 'create') return step;
    const token = generateUserGroupToken();
    const group: NewUserGroup = { ...step.group, tokenHash: hashSecret(token), tokenCiphertext: cipher.encrypt(token) };
    return { ...step, group };
  }

  /** The lines in domain terms, each checked as a single write checks its input, refusals naming the line. */
  async function desiredLines(
    tenant: Tenant,
    lines: Array<{ at: InputPosition; group: SyncLineInput }>,
  ): Promise<DesiredLine[]> {
    const resolve = await createMappingResolver(
      store,
      tenant,
      lines.flatMap(({ group }) => (group.mapping ? [group.mapping] : [])),
    );
    const accessRules = lines.map(({ at, group }) => {
      try {
        return group.accessRules === undefined ? undefined : checkedAccessRules(group.accessRules);
      } catch (error) {
        throw isAppError(error) ? atPosition(error, at) : error;
      }
    });
    // One catalogue read for every rule of the file.
    const knownSchemas = await knownRuleSchemas(
      store,
      tenant,
      accessRules.flatMap((rules) => rules ?? []),
    );
    return lines.map(({ at, group }, index) => {
      try {
        if (group.properties !== undefined) assertPropertiesWithinLimits(group.properties);
        const rules = accessRules[index];
        if (rules !== undefined) assertSchemasExist(rules, knownSchemas);
        return {
          at,
          group: {
            providedId: providedIdOf(group.userGroupId),
            ...(group.name !== undefined ? { name: group.name } : {}),
            ...(group.parentUserGroupId !== undefined
              ? { parentProvidedId: parentProvidedIdOf(group.parentUserGroupId) }
              : {}),
            ...(group.properties !== undefined ? { properties: group.properties } : {}),
            ...(group.mapping !== undefined ? { mapping: group.mapping === null ? [] : resolve(group.mapping) } : {}),
            ...(group.tags !== undefined ? { tags: group.tags === null ? [] : sortedTags(group.tags) } : {}),
            ...(group.isDemoGroup !== undefined ? { isDemoGroup: group.isDemoGroup ?? false } : {}),
            ...(rules !== undefined ? { accessRules: rules } : {}),
          },
        };
      } catch (error) {
        throw isAppError(error) ? atPosition(error, at) : error;
      }
    });
  }

  /**
   * The groups the plan depends on: those the file names (as groups or parents), the stored subtrees of
   * those it moves, and what a prune touches (the tagged groups the file leaves out, counted against
   * the bound on their links alone before any is read in full, and their children). Every read is a
   * chunk or one indexed statement; the event loop runs between them.
   */
  async function readFacts(
    tenant: Tenant,
    lines: DesiredLine[],
    pruneTag: string | undefined,
    signal: AbortSignal,
  ): Promise<SyncFacts> {
    const ids = new Set<string>();
    for (const { group } of lines) {
      ids.add(group.providedId);
      if (group.parentProvidedId) ids.add(group.parentProvidedId);
    }
    const named = await readGroups(tenant, [...ids], signal);
    const prunedIds = pruneTag === undefined ? [] : await prunedBy(tenant, pruneTag, lines, signal);
    const pruned = await readGroups(tenant, prunedIds, signal);
    const below: UserGroupLink[] = [];
    const seen = new Set<number>();
    const add = (links: UserGroupLink[]) => links.filter((link) => !seen.has(link.teamId) && seen.add(link.teamId));
    if (pruned.length > 0) {
      await checkpoint(signal);
      below.push(
        ...add(
          await store.listUserGroupChildren(
            tenant,
            pruned.map((group) => group.teamId),
          ),
        ),
      );
    }
    // The moved groups' subtrees, a level per read: the depth rule bounds how many.
    let level = movedGroups(lines, named).map((group) => group.teamId);
    for (let depth = 1; level.length > 0 && depth < HIERARCHY_READ_LIMIT; depth += 1) {
      await checkpoint(signal);
      const children = add(await store.listUserGroupChildren(tenant, level));
      below.push(...children);
      level = children.map((child) => child.teamId);
    }
    await checkpoint(signal);
    return { tenant, named, pruned, below };
  }

  async function readGroups(tenant: Tenant, providedIds: string[], signal: AbortSignal): Promise<UserGroupRecord[]> {
    const groups: UserGroupRecord[] = [];
    for (let start = 0; start < providedIds.length; start += READ_CHUNK) {
      await checkpoint(signal);
      groups.push(...(await store.findUserGroupsByProvidedIds(tenant, providedIds.slice(start, start + READ_CHUNK))));
    }
    return groups;
  }

  /** The provided ids of the groups carrying the tag that the file leaves out; refused once past the bound. */
  async function prunedBy(tenant: Tenant, tag: string, lines: DesiredLine[], signal: AbortSignal): Promise<string[]> {
    const inFile = new Set(lines.map(({ group }) => group.providedId));
    const pruned: string[] = [];
    for (let afterTeamId: number | undefined; ;) {
      await checkpoint(signal);
      const page = await store.listTaggedUserGroupLinks(tenant, tag, { afterTeamId, limit: LINK_CHUNK });
      for (const link of page) if (!inFile.has(link.providedId)) pruned.push(link.providedId);
      assertPruneWithinBound(tag, pruned.length);
      const last = page[page.length - 1];
      if (page.length < LINK_CHUNK || last === undefined) return pruned;
      afterTeamId = last.teamId;
    }
  }

  return { sync, stop };
}

/**
 * Lets the event loop run (other requests, timers, signals) between two chunks of a sync's work: an
 * engine that answers synchronously (SQLite) would otherwise hold it for the whole plan. Then stops the
 * sync, with nothing written, if it was aborted meanwhile.
 */
async function checkpoint(signal: AbortSignal): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  if (signal.aborted) throw failure.syncStopped();
}
