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
import type {
  UserGroupStore,
  UserGroupTokenRotation,
  UserGroupWrite,
  UserGroupWritePolicy,
} from './user-groups.port.js';
import { keepableTeamId } from './team-ids.rules.js';
import { mappingToRecord } from './mapping.js';
import { LACKING_LISTED } from '../../wire/contract.constants.js';
import {
  importDifferences,
  lackedFields,
  supplemented,
  type CarriedField,
  type FieldDifference,
  type Supplement,
} from './user-group-transfer.rules.js';

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

/** What `verifyImportedUserGroups` found: every line is checked, matched, different, missing or unreadable. */
export interface ImportVerification {
  checked: number;
  matched: number;
  differences: Array<{ line: number; provided_id: string; fields: FieldDifference[] }>;
  /** Lines whose group does not exist in their environment. */
  missing: Array<{ line: number; provided_id: string }>;
  unreadable: Array<{ line: number; reason: string }>;
}

/** A line as the reader saw it: either a well-formed group or why it is not one. */
export type ImportLine = { line: number; group: TransferredUserGroup } | { line: number; error: string };

export interface ImportSummary {
  created: number;
  updated: number;
  unchanged: number;
  rejected: Array<{ line: number; reason: string }>;
  /**
   * Each line that lacked a field this service keeps (`fields`), and which of those its supplement
   * line gave (`supplied`). A field neither gave keeps what the group had here, or the default (no
   * mapping, no parent, not a demo group).
   */
  lacking: Array<{ line: number; provided_id: string; fields: CarriedField[]; supplied: CarriedField[] }>;
  /** How many lines lacked a field (`lacking` lists the first LACKING_LISTED of them). */
  lacking_lines: number;
  /** Per field, how many lines lacked it and how many of those the supplement gave it to. */
  lacking_fields: Partial<Record<CarriedField, { lacked: number; supplied: number }>>;
  /** How many lines a supplement added fields to. */
  supplemented: number;
}

export interface ImportOptions {
  /** Puts every line in this environment instead of the line's own api_environment_tag. */
  environment?: Environment;
  /** Fields a line lacks are taken from the supplement's line of the same provided id. */
  supplement?: Supplement;
  /** A line lacking any of these (after its supplement) is rejected rather than imported. */
  requireFields?: readonly CarriedField[];
  batchSize?: number;
  onProgress?: (linesDone: number) => void;
  /** Plans every line as the import would and writes nothing: the summary says what it would do. */
  dryRun?: boolean;
  /**
   * A line whose token differs from its group's current one replaces it, as an audited rotation
   * (`user_group.token_rotated`); without this such a line is refused, so that an old export never
   * puts back a token that was rotated away.
   */
  replaceTokens?: boolean;
  /** Once aborted (the HTTP client gone), nothing more is written and the import stops. */
  signal?: AbortSignal;
}

/** What the batches of one import share besides its summary. */
interface ImportMode {
  dryRun: boolean;
  replaceTokens: boolean;
  signal: AbortSignal | undefined;
  /** A dry run's creates, per environment: the parents later lines may name though nothing was written. */
  wouldExist: Map<Environment, Set<string>>;
  /** A dry run's token hashes, per environment: a later line with one of them would be refused as the store would. */
  wouldHoldTokens: Map<Environment, Set<string>>;
}

type TransferStore = Pick<
  UserGroupStore,
  | 'listUserGroups'
  | 'findUserGroupsByProvidedIds'
  | 'applyUserGroupWrites'
  | 'rotateUserGroupToken'
  | 'findUserGroupByTokenHash'
> &
  Pick<DataSourceStore, 'listDataSources' | 'findDataSources'> &
  Pick<SchemaStore, 'findSchemasByIds'> &
  Pick<Store, 'refreshStatistics'>;

const DEFAULT_BATCH = 1000;
export { LACKING_LISTED };
const MAX_BATCH_ATTEMPTS = 3;
/** An import writes in batches; a refused batch is written again a line at a time, to refuse only its lines at fault. */
const PER_BATCH: UserGroupWritePolicy = { policy: 'per_batch' };

type Pending = { line: number; group: TransferredUserGroup };
type PlannedWrite = Pending & { write: UserGroupWrite; rotation?: UserGroupTokenRotation };
type PlannedRotation = Pending & { rotation: UserGroupTokenRotation };

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
    const summary: ImportSummary = {
      created: 0,
      updated: 0,
      unchanged: 0,
      rejected: [],
      lacking: [],
      lacking_lines: 0,
      lacking_fields: {},
      supplemented: 0,
    };
    const batchSize = options.batchSize ?? DEFAULT_BATCH;
    const mode: ImportMode = {
      dryRun: options.dryRun === true,
      replaceTokens: options.replaceTokens === true,
      signal: options.signal,
      wouldExist: new Map(),
      wouldHoldTokens: new Map(),
    };
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
      await importBatch(inEnvironment(caller, environment), batch.lines, summary, deferred, mode);
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
      const group = supplemented(item.group, environment, options.supplement);
      if (group !== item.group) summary.supplemented += 1;
      const lacked = lackedFields(item.group);
      const stillLacked = lackedFields(group);
      const required = stillLacked.filter((field) => options.requireFields?.includes(field));
      if (required.length > 0) {
        summary.rejected.push({ line: item.line, reason: `the line lacks ${required.join(', ')}, which is required` });
        continue;
      }
      if (lacked.length > 0) {
        const supplied = lacked.filter((field) => !stillLacked.includes(field));
        summary.lacking_lines += 1;
        for (const field of lacked) {
          const count = (summary.lacking_fields[field] ??= { lacked: 0, supplied: 0 });
          count.lacked += 1;
          if (supplied.includes(field)) count.supplied += 1;
        }
        if (summary.lacking.length < LACKING_LISTED)
          summary.lacking.push({ line: item.line, provided_id: providedId, fields: lacked, supplied });
      }
      // Each provided id once per batch, so a batch's writes never collide with each other.
      if (batches.get(environment)?.providedIds.has(providedId)) await flush(environment);
      const batch = batches.get(environment) ?? { lines: [], providedIds: new Set<string>() };
      batches.set(environment, batch);
      batch.lines.push({ line: item.line, group });
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
          await importBatch(envCaller, pending.slice(start, start + batchSize), summary, deferred, mode);
        }
        if (deferred.length === lastRound) {
          for (let start = 0; start < deferred.length; start += batchSize)
            await importBatch(envCaller, deferred.slice(start, start + batchSize), summary, null, mode);
          break;
        }
        pending = deferred;
      }
      options.onProgress?.(done + lines.length + summary.rejected.length);
    }
    summary.rejected.sort((a, b) => a.line - b.line);
    // A bulk load changes what the planner should expect of the tables (docs/performance.md).
    if (!mode.dryRun && summary.created + summary.updated > 0) (await store.refreshStatistics()).forEach(warn);
    return summary;
  }

  /** Writes one batch; with `deferred`, a line whose parent does not exist yet goes there instead of failing. */
  async function importBatch(
    caller: Caller,
    batch: Pending[],
    summary: ImportSummary,
    deferred: Pending[] | null,
    mode: ImportMode,
  ): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      const plan = await planBatch(caller, batch, deferred, mode);
      if (mode.dryRun) {
        for (const { write } of plan.writes) summary[write.kind === 'create' ? 'created' : 'updated'] += 1;
        summary.updated += plan.rotations.length;
        summary.unchanged += plan.unchanged;
        summary.rejected.push(...plan.rejected);
        return;
      }
      if (mode.signal?.aborted) throw failure.importStopped();
      try {
        await rotateTokens(caller, plan, summary);
        await store.applyUserGroupWrites(
          caller.tenant,
          plan.writes.map((write) => write.write),
          auditContextOf(clock, caller),
          PER_BATCH,
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

  /**
   * The token replacements a batch asked for, each its own transaction with its `user_group.token_rotated`
   * audit event and webhook, before the batch's other writes (whose expected versions follow them).
   * A line whose rotation is refused is refused whole: its other changes are left out of the batch.
   */
  async function rotateTokens(
    caller: Caller,
    plan: { writes: PlannedWrite[]; rotations: PlannedRotation[]; rejected: ImportSummary['rejected'] },
    summary: ImportSummary,
  ): Promise<void> {
    const withWrites = plan.writes.filter((planned) => planned.rotation !== undefined);
    for (const planned of [...plan.rotations, ...withWrites]) {
      const rotation = planned.rotation!;
      let rotated: UserGroupRecord | null;
      try {
        rotated = await store.rotateUserGroupToken(
          rotation,
          auditContextOf(() => rotation.updatedAt, caller),
        );
      } catch (error) {
        if (!isAppError(error) || error.code === 'unavailable') throw error;
        rotated = null;
        plan.rejected.push({ line: planned.line, reason: error.message });
      }
      if (rotated === null) {
        if (!plan.rejected.some((rejection) => rejection.line === planned.line))
          plan.rejected.push({ line: planned.line, reason: failure.concurrentImportChange().message });
        if ('write' in planned) plan.writes.splice(plan.writes.indexOf(planned), 1);
        continue;
      }
      if (!('write' in planned)) summary.updated += 1;
      else if (planned.write.kind === 'update') planned.write.update.expectedVersion = rotated.version;
    }
    plan.rotations.length = 0;
  }

  async function writeOneByOne(
    caller: Caller,
    writes: PlannedWrite[],
    summary: ImportSummary,
    deferred: Pending[] | null,
  ): Promise<void> {
    for (const { line, group, write } of writes) {
      try {
        await store.applyUserGroupWrites(caller.tenant, [write], auditContextOf(clock, caller), PER_BATCH);
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

  async function planBatch(caller: Caller, batch: Pending[], deferred: Pending[] | null, mode: ImportMode) {
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
    const writes: PlannedWrite[] = [];
    const rotations: PlannedRotation[] = [];
    const wouldExist = mode.wouldExist.get(caller.tenant.environment) ?? new Set<string>();
    mode.wouldExist.set(caller.tenant.environment, wouldExist);
    const rejected: ImportSummary['rejected'] = [];
    let unchanged = 0;
    let deferredHere = 0;
    // Planned in the batch's tree order, so a parent's write precedes its children's in the transaction.
    const planned = new Set<string>();
    for (const { line, group } of parentsFirst(batch)) {
      const parent = parentIdOf(group);
      const parentKnown = parent === null || existing.has(parent) || planned.has(parent) || wouldExist.has(parent);
      if (deferred && !parentKnown) {
        deferred.push({ line, group });
        deferredHere += 1;
        continue;
      }
      try {
        // What the store would refuse when writing, a dry run refuses here.
        if (mode.dryRun && parent !== null && !parentKnown) throw failure.unknownParent(parent);
        const current = existing.get(providedIdOf(group.provided_id));
        const rotation = current ? plannedRotation(caller, group, current, mode) : undefined;
        if (mode.dryRun) await assertTokenFreeInDryRun(caller, group, current, mode);
        const write = planWrite(caller, group, current, resolve, ruleSchemas);
        planned.add(providedIdOf(group.provided_id));
        if (mode.dryRun && write?.kind === 'create') wouldExist.add(providedIdOf(group.provided_id));
        if (write) writes.push({ line, group, write, ...(rotation ? { rotation } : {}) });
        else if (rotation) rotations.push({ line, group, rotation });
        else unchanged += 1;
      } catch (error) {
        if (!isAppError(error)) throw error;
        rejected.push({ line, reason: error.message });
      }
    }
    return { writes, rotations, rejected, unchanged, deferred: deferredHere };
  }

  /**
   * The rotation a line asks for when its token is not its group's current one: refused unless the
   * import replaces tokens, so that an old export never silently puts back a token rotated away.
   */
  function plannedRotation(
    caller: Caller,
    group: TransferredUserGroup,
    current: UserGroupRecord,
    mode: ImportMode,
  ): UserGroupTokenRotation | undefined {
    if (group.token === undefined) return undefined;
    const hashes = tokenLookupHashes(group.token, cipher);
    if (hashes.length === 0) throw failure.importTokenShape();
    if (hashes.includes(current.tokenHash)) return undefined;
    if (!mode.replaceTokens) throw failure.importTokenDiffers();
    return {
      tenant: caller.tenant,
      currentTokenHash: current.tokenHash,
      newTokenHash: storedTokenHash(group.token, cipher),
      newTokenCiphertext: mode.dryRun ? '' : cipher.encrypt(group.token),
      updatedAt: clock(),
    };
  }

  /**
   * A dry run finds a token another group of the caller's environment holds (or an earlier line of
   * the run), refused as the write would be. It looks nowhere else: a token held in another
   * workspace or environment is found only by the write, with the same refusal (docs/api.md).
   */
  async function assertTokenFreeInDryRun(
    caller: Caller,
    group: TransferredUserGroup,
    current: UserGroupRecord | undefined,
    mode: ImportMode,
  ): Promise<void> {
    if (group.token === undefined) return;
    const hashes = tokenLookupHashes(group.token, cipher);
    if (hashes.length === 0 || (current && hashes.includes(current.tokenHash))) return;
    const held = mode.wouldHoldTokens.get(caller.tenant.environment) ?? new Set<string>();
    mode.wouldHoldTokens.set(caller.tenant.environment, held);
    const holders = await Promise.all(hashes.map((hash) => store.findUserGroupByTokenHash(caller.tenant, hash)));
    if (hashes.some((hash) => held.has(hash)) || holders.some((holder) => holder !== null))
      throw failure.taken('user_group_token');
    hashes.forEach((hash) => held.add(hash));
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
          // Above the bound a team_id is not kept: it would raise every later group's number.
          ...(keepableTeamId(group.team_id) ? { teamId: group.team_id } : {}),
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
      // A token that differs is not patched: it is a rotation (plannedRotation), or the line is refused.
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

  /**
   * What an Idempotency-Key's fingerprint may take of an import line: the line with its token as a
   * keyed hash (HMAC under the deployment's lookup key), never the token or a plain hash of it.
   */
  function fingerprintOf(line: ImportLine): unknown {
    if (!('group' in line) || line.group.token === undefined) return line;
    return { ...line, group: { ...line.group, token: cipher.lookupHashes(line.group.token)[0] } };
  }

  /**
   * Compares every group a file imported with its line (after its supplement): the token verifies,
   * and team_id, name, properties, mapping, parent and demo flag are as the line has them. A field
   * the line lacks is not compared (the import reported it).
   */
  async function verifyImportedUserGroups(
    caller: Caller,
    lines: AsyncIterable<ImportLine> | Iterable<ImportLine>,
    options: Pick<ImportOptions, 'environment' | 'supplement' | 'batchSize'> = {},
  ): Promise<ImportVerification> {
    requireScope(caller, 'admin');
    const result: ImportVerification = { checked: 0, matched: 0, differences: [], missing: [], unreadable: [] };
    const batchSize = options.batchSize ?? DEFAULT_BATCH;
    const batches = new Map<Environment, Pending[]>();
    const check = async (environment: Environment) => {
      const batch = batches.get(environment) ?? [];
      batches.delete(environment);
      if (batch.length === 0) return;
      const { tenant } = inEnvironment(caller, environment);
      const found = new Map(
        (
          await store.findUserGroupsByProvidedIds(tenant, [
            ...new Set(batch.map(({ group }) => providedIdOf(group.provided_id))),
          ])
        ).map((group) => [group.providedId, group]),
      );
      const resolve = await createMappingResolver(
        store,
        tenant,
        batch.flatMap(({ group }) => (group.mapping ? [group.mapping] : [])),
      );
      for (const { line, group } of batch) {
        const providedId = providedIdOf(group.provided_id);
        const existing = found.get(providedId);
        result.checked += 1;
        if (!existing) {
          result.missing.push({ line, provided_id: providedId });
          continue;
        }
        let mapping: Parameters<typeof importDifferences>[2];
        try {
          mapping = group.mapping === undefined ? undefined : resolve(group.mapping ?? {});
        } catch (error) {
          if (!isAppError(error)) throw error;
          mapping = { unresolved: error.message };
        }
        const tokenVerifies =
          group.token === undefined ? undefined : tokenLookupHashes(group.token, cipher).includes(existing.tokenHash);
        const differences = importDifferences(group, existing, mapping, tokenVerifies, mappingToRecord);
        if (differences.length === 0) result.matched += 1;
        else result.differences.push({ line, provided_id: providedId, fields: differences });
      }
    };
    for await (const item of lines) {
      if ('error' in item) {
        result.unreadable.push({ line: item.line, reason: item.error });
        continue;
      }
      const environment = options.environment ?? item.group.api_environment_tag ?? caller.tenant.environment;
      const batch = batches.get(environment) ?? batches.set(environment, []).get(environment)!;
      batch.push({ line: item.line, group: supplemented(item.group, environment, options.supplement) });
      if (batch.length >= batchSize) await check(environment);
    }
    for (const environment of [...batches.keys()]) await check(environment);
    for (const list of [result.differences, result.missing, result.unreadable]) list.sort((a, b) => a.line - b.line);
    return result;
  }

  return { exportUserGroups, importUserGroups, verifyImportedUserGroups, fingerprintOf };
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
