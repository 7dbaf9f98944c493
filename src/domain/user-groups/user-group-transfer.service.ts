import { auditContextOf } from '../audit/audit-context.js';
import { failure, isAppError } from '../errors.js';
import type { Clock } from '../clock.js';
import { createMappingResolver, type MappingInput, type MappingResolver } from './mapping.js';
import type { JsonObject } from '../common.records.js';
import type { UserGroupPatch, UserGroupRecord } from './user-group.records.js';
import { assertPropertiesWithinLimits } from './properties.rules.js';
import { requireScope } from '../api-tokens/scopes.js';
import { generateUserGroupToken, storedTokenHash, tokenLookupHashes } from '../secrets.js';
import type { Keyring } from '../encryption-keys/keyring.js';
import { inEnvironment, readsSecrets, type Caller, type Environment } from '../tenancy.js';
import { diffUserGroup, wholeGroupChanges } from './user-group-diff.rules.js';
import { assertSchemasExist, checkedAccessRules } from '../access-rules/access-rules.rules.js';
import { knownRuleSchemas } from '../access-rules/access-rule-schemas.js';
import { newTreeFields, parentProvidedIdOf, providedIdOf, treeFieldsPatch } from './user-groups.service.js';
import type { DataSourceStore } from '../data-sources/data-sources.port.js';
import type { SchemaStore } from '../schemas/schemas.port.js';
import type { Store } from '../store.port.js';
import type { UserGroupStore, UserGroupWrite } from './user-groups.port.js';

/** One line of an export file, and what an import reads. */
export interface TransferredUserGroup {
  team_id?: number;
  provided_id: string | number;
  name?: string;
  properties?: JsonObject | null;
  /** Schema id → data source provided id (export) or any mapping value an API call accepts (import); null: none. */
  mapping?: MappingInput | null;
  parent_user_group_id?: string | number | null;
  is_demo_group?: boolean;
  tags?: string[];
  /** The group's own access rules (docs/api.md#access-rules); null or []: none. */
  access_rules?: unknown;
  api_environment_tag?: Environment | null;
  token?: string;
  created_at?: string;
  updated_at?: string;
}

/** A line as the reader saw it: either a well-formed group or why it is not one. */
export type ImportLine = { line: number; group: TransferredUserGroup } | { line: number; error: string };

export interface ImportSummary {
  created: number;
  updated: number;
  unchanged: number;
  rejected: Array<{ line: number; reason: string }>;
}

export interface ImportOptions {
  /** Puts every line in this environment instead of the line's own api_environment_tag. */
  environment?: Environment;
  batchSize?: number;
  onProgress?: (linesDone: number) => void;
}

type TransferStore = Pick<UserGroupStore, 'listUserGroups' | 'findUserGroupsByProvidedIds' | 'writeUserGroups'> &
  Pick<DataSourceStore, 'listDataSources' | 'findDataSources'> &
  Pick<SchemaStore, 'findSchemasByIds'> &
  Pick<Store, 'refreshStatistics'>;

const DEFAULT_BATCH = 1000;
const MAX_BATCH_ATTEMPTS = 3;

type Pending = { line: number; group: TransferredUserGroup };

export type UserGroupTransferService = ReturnType<typeof createUserGroupTransferService>;

/**
 * Bulk export and import in JSON Lines. An import upserts by provided id in batches, each one
 * transaction; rerunning a file changes nothing, so an interrupted import is resumed by running it
 * again.
 */
export function createUserGroupTransferService({
  store,
  cipher,
  clock,
  warn,
}: {
  store: TransferStore;
  cipher: Keyring;
  clock: Clock;
  /** Told of statistics the import could not refresh (see Store.refreshStatistics). */
  warn: (message: string) => void;
}) {
  async function* exportUserGroups(
    caller: Caller,
    options: { includeTokens: boolean; pageSize?: number },
  ): AsyncGenerator<TransferredUserGroup> {
    requireScope(caller, 'admin');
    // Data source ids are local to a database; provided ids travel.
    const providedIdOfDataSource = new Map(
      (await store.listDataSources(caller.tenant.workspaceId, caller.tenant.environment)).map((dataSource) => [
        dataSource.id,
        dataSource.providedId,
      ]),
    );
    const pageSize = options.pageSize ?? DEFAULT_BATCH;
    let afterTeamId: number | undefined;
    for (;;) {
      const page = await store.listUserGroups({ tenant: caller.tenant, afterTeamId, limit: pageSize });
      for (const group of page) {
        yield {
          team_id: group.teamId,
          provided_id: group.providedId,
          name: group.name,
          properties: group.properties,
          mapping: Object.fromEntries(
            group.mapping.map((entry) => [
              String(entry.schemaId),
              providedIdOfDataSource.get(entry.dataSourceId) ?? entry.dataSourceId,
            ]),
          ),
          parent_user_group_id: group.parentProvidedId,
          is_demo_group: group.isDemoGroup,
          tags: group.tags,
          access_rules: group.accessRules,
          api_environment_tag: group.environment,
          created_at: group.createdAt,
          updated_at: group.updatedAt,
          // Never across environments (docs/api.md#the-admin-api): only a caller of the group's environment gets its token.
          ...(options.includeTokens && readsSecrets(caller) ? { token: cipher.decrypt(group.tokenCiphertext) } : {}),
        };
      }
      const last = page[page.length - 1];
      if (page.length < pageSize || last === undefined) return;
      afterTeamId = last.teamId;
    }
  }

  async function importUserGroups(
    caller: Caller,
    lines: AsyncIterable<ImportLine> | Iterable<ImportLine>,
    options: ImportOptions = {},
  ): Promise<ImportSummary> {
    requireScope(caller, 'admin');
    const summary: ImportSummary = { created: 0, updated: 0, unchanged: 0, rejected: [] };
    const batchSize = options.batchSize ?? DEFAULT_BATCH;
    // One open batch per environment: a batch is one tenant's transaction, and files may interleave.
    const batches = new Map<Environment, { lines: Pending[]; providedIds: Set<string> }>();
    // Lines whose parent is neither in the database nor written yet: a later line may create it.
    const waiting = new Map<Environment, Pending[]>();
    const waitingIn = (environment: Environment) =>
      waiting.get(environment) ?? waiting.set(environment, []).get(environment)!;
    let done = 0;

    const flush = async (environment: Environment) => {
      const batch = batches.get(environment);
      if (!batch || batch.lines.length === 0) return;
      batches.delete(environment);
      const deferred = waitingIn(environment);
      const before = deferred.length;
      await importBatch(inEnvironment(caller, environment), batch.lines, summary, deferred);
      done += batch.lines.length - (deferred.length - before);
      options.onProgress?.(done + summary.rejected.length);
    };

    for await (const item of lines) {
      if ('error' in item) {
        summary.rejected.push({ line: item.line, reason: item.error });
        continue;
      }
      // The hosted product may show a null environment tag: then the caller's environment.
      const environment = options.environment ?? item.group.api_environment_tag ?? caller.tenant.environment;
      const providedId = providedIdOf(item.group.provided_id);
      // Each provided id once per batch, so a batch's writes never collide with each other.
      if (batches.get(environment)?.providedIds.has(providedId)) await flush(environment);
      const batch = batches.get(environment) ?? { lines: [], providedIds: new Set<string>() };
      batches.set(environment, batch);
      batch.lines.push(item);
      batch.providedIds.add(providedId);
      if (batch.lines.length >= batchSize) await flush(environment);
    }
    for (const environment of [...batches.keys()]) await flush(environment);
    // Parents before children whatever the file's order: lines that waited for a parent run again
    // for as long as a round writes some of them (a tree is at most 4 levels, so a few rounds); what
    // still waits then is refused with the store's reason.
    for (const [environment, lines] of waiting) {
      let pending = lines;
      while (pending.length > 0) {
        const deferred: Pending[] = [];
        const envCaller = inEnvironment(caller, environment);
        const lastRound = pending.length;
        for (let start = 0; start < pending.length; start += batchSize) {
          await importBatch(envCaller, pending.slice(start, start + batchSize), summary, deferred);
        }
        if (deferred.length === lastRound) {
          for (let start = 0; start < deferred.length; start += batchSize)
            await importBatch(envCaller, deferred.slice(start, start + batchSize), summary, null);
          break;
        }
        pending = deferred;
      }
      options.onProgress?.(done + lines.length + summary.rejected.length);
    }
    summary.rejected.sort((a, b) => a.line - b.line);
    // A bulk load changes what the planner should expect of the tables (docs/performance.md).
    if (summary.created + summary.updated > 0) (await store.refreshStatistics()).forEach(warn);
    return summary;
  }

  /** Writes one batch; with `deferred`, a line whose parent does not exist yet goes there instead of failing. */
  async function importBatch(
    caller: Caller,
    batch: Pending[],
    summary: ImportSummary,
    deferred: Pending[] | null,
  ): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      const plan = await planBatch(caller, batch, deferred);
      try {
        await store.writeUserGroups(
          plan.writes.map((write) => write.write),
          auditContextOf(clock, caller),
        );
        for (const { write } of plan.writes) summary[write.kind === 'create' ? 'created' : 'updated'] += 1;
      } catch (error) {
        if (isAppError(error) && error.code === 'concurrent_change' && attempt < MAX_BATCH_ATTEMPTS) {
          deferred?.splice(deferred.length - plan.deferred, plan.deferred);
          continue;
        }
        if (isAppError(error) && error.code === 'unavailable') throw error;
        // One bad row fails its whole batch; write the rows one by one to learn which.
        await writeOneByOne(caller, plan.writes, summary, deferred);
      }
      summary.unchanged += plan.unchanged;
      summary.rejected.push(...plan.rejected);
      return;
    }
  }

  async function writeOneByOne(
    caller: Caller,
    writes: Array<Pending & { write: UserGroupWrite }>,
    summary: ImportSummary,
    deferred: Pending[] | null,
  ): Promise<void> {
    for (const { line, group, write } of writes) {
      try {
        await store.writeUserGroups([write], auditContextOf(clock, caller));
        summary[write.kind === 'create' ? 'created' : 'updated'] += 1;
      } catch (error) {
        if (isAppError(error) && error.code === 'unavailable') throw error;
        // Its parent's own line failed or waits: this one waits too.
        if (deferred && isAppError(error) && error.code === 'unknown_parent') deferred.push({ line, group });
        else
          summary.rejected.push({
            line,
            reason: isAppError(error) ? error.message : 'The group could not be written.',
          });
      }
    }
  }

  async function planBatch(caller: Caller, batch: Pending[], deferred: Pending[] | null) {
    const parentIds = batch.flatMap(({ group }) => parentIdOf(group) ?? []);
    const existing = new Map(
      (
        await store.findUserGroupsByProvidedIds(caller.tenant, [
          ...new Set([...batch.map(({ group }) => providedIdOf(group.provided_id)), ...parentIds]),
        ])
      ).map((group) => [group.providedId, group]),
    );
    const resolve = await createMappingResolver(
      store,
      caller.tenant,
      batch.flatMap(({ group }) => (group.mapping ? [group.mapping] : [])),
    );
    // The schemas every well-formed line's rules name, in one read; a malformed line is refused on its own below.
    const ruleSchemas = await knownRuleSchemas(
      store,
      caller.tenant,
      batch.flatMap(({ group }) => {
        try {
          return checkedAccessRules(group.access_rules);
        } catch {
          return [];
        }
      }),
    );
    const writes: Array<Pending & { write: UserGroupWrite }> = [];
    const rejected: ImportSummary['rejected'] = [];
    let unchanged = 0;
    let deferredHere = 0;
    // Planned in the batch's tree order, so a parent's write precedes its children's in the transaction.
    const planned = new Set<string>();
    for (const { line, group } of parentsFirst(batch)) {
      const parent = parentIdOf(group);
      if (deferred && parent !== null && !existing.has(parent) && !planned.has(parent)) {
        deferred.push({ line, group });
        deferredHere += 1;
        continue;
      }
      try {
        const write = planWrite(caller, group, existing.get(providedIdOf(group.provided_id)), resolve, ruleSchemas);
        planned.add(providedIdOf(group.provided_id));
        if (write) writes.push({ line, group, write });
        else unchanged += 1;
      } catch (error) {
        if (!isAppError(error)) throw error;
        rejected.push({ line, reason: error.message });
      }
    }
    return { writes, rejected, unchanged, deferred: deferredHere };
  }

  function planWrite(
    caller: Caller,
    group: TransferredUserGroup,
    existing: UserGroupRecord | undefined,
    resolve: MappingResolver,
    ruleSchemas: ReadonlySet<number>,
  ): UserGroupWrite | null {
    const providedId = providedIdOf(group.provided_id);
    if (group.properties !== undefined) assertPropertiesWithinLimits(group.properties);
    const accessRules = group.access_rules === undefined ? undefined : checkedAccessRules(group.access_rules);
    if (accessRules) assertSchemasExist(accessRules, ruleSchemas);
    // A native token, or the hosted product's (docs/api.md#tokens-imported-from-the-hosted-product): either verifies from then on as it did there.
    if (group.token !== undefined && tokenLookupHashes(group.token, cipher).length === 0) {
      throw failure.importTokenShape();
    }
    // Null clears the mapping, as on PUT.
    const mapping = group.mapping === undefined ? undefined : resolve(group.mapping ?? {});
    const tokenFields = (token: string) => ({
      tokenHash: storedTokenHash(token, cipher),
      tokenCiphertext: cipher.encrypt(token),
    });
    const now = clock();
    const tree = {
      parentUserGroupId: group.parent_user_group_id,
      isDemoGroup: group.is_demo_group,
      tags: group.tags,
      accessRules,
    };

    if (!existing) {
      const content = {
        providedId,
        name: group.name ?? providedId,
        properties: group.properties ?? null,
        mapping: mapping ?? [],
        ...newTreeFields(tree),
      };
      return {
        kind: 'create',
        group: {
          tenant: caller.tenant,
          ...(group.team_id !== undefined ? { teamId: group.team_id } : {}),
          ...content,
          createdAt: now,
          ...tokenFields(group.token ?? generateUserGroupToken()),
        },
        changes: wholeGroupChanges(content, true),
      };
    }
    const requested: UserGroupPatch = {
      ...(group.name !== undefined ? { name: group.name } : {}),
      ...(group.properties !== undefined ? { properties: group.properties } : {}),
      ...(mapping !== undefined ? { mapping } : {}),
      ...treeFieldsPatch(tree),
      // Encrypting costs a little; only do it when the token actually differs.
      ...(group.token !== undefined && !tokenLookupHashes(group.token, cipher).includes(existing.tokenHash)
        ? tokenFields(group.token)
        : {}),
    };
    const { patch, changes } = diffUserGroup(existing, requested);
    if (Object.keys(changes).length === 0) return null;
    return {
      kind: 'update',
      update: {
        tenant: caller.tenant,
        teamId: existing.teamId,
        expectedVersion: existing.version,
        patch,
        updatedAt: now,
      },
      changes,
    };
  }

  return { exportUserGroups, importUserGroups };
}

/** The provided id of the parent a line names, or null for none (or a detach). */
const parentIdOf = (group: TransferredUserGroup): string | null => parentProvidedIdOf(group.parent_user_group_id);

/** The batch with every line after the line of its parent (when the batch has it); otherwise in file order. */
function parentsFirst(batch: Pending[]): Pending[] {
  const byId = new Map(batch.map((pending) => [providedIdOf(pending.group.provided_id), pending]));
  const depth = new Map<Pending, number>();
  const depthOf = (pending: Pending, seen: Set<Pending>): number => {
    const known = depth.get(pending);
    if (known !== undefined) return known;
    const parentId = parentIdOf(pending.group);
    const parent = parentId === null ? undefined : byId.get(parentId);
    // A cycle inside the file stops here; the store refuses it when the lines are written.
    const value = parent === undefined || seen.has(parent) ? 0 : depthOf(parent, new Set(seen).add(pending)) + 1;
    depth.set(pending, value);
    return value;
  };
  return batch
    .map((pending, index) => ({ pending, index, depth: depthOf(pending, new Set([pending])) }))
    .sort((a, b) => a.depth - b.depth || a.index - b.index)
    .map(({ pending }) => pending);
}
