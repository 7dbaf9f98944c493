import { auditContextOf } from './audit-context.js';
import { AppError, isAppError } from './errors.js';
import type { Clock } from './clock.js';
import { createMappingResolver, type MappingInput, type MappingResolver } from './mapping.js';
import type { JsonObject, UserGroupPatch, UserGroupRecord } from './models.js';
import { assertPropertiesWithinLimits } from './properties.js';
import { requireScope } from './scopes.js';
import { generateUserGroupToken, hashSecret, isUserGroupTokenShaped, type TokenCipher } from './secrets.js';
import { inEnvironment, type Caller, type Environment } from './tenancy.js';
import { diffUserGroup, wholeGroupChanges } from './user-group-diff.js';
import { providedIdOf } from './user-groups.service.js';
import type { DataSourceStore, SchemaStore, UserGroupStore, UserGroupWrite } from '../store/store.js';

/** One line of an export file, and what an import reads. */
export interface TransferredUserGroup {
  team_id?: number;
  provided_id: string | number;
  name?: string;
  properties?: JsonObject | null;
  /** Schema id → data source provided id (export) or any mapping value an API call accepts (import). */
  mapping?: MappingInput;
  api_environment_tag?: Environment;
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
  Pick<SchemaStore, 'findSchemasByIds'>;

const DEFAULT_BATCH = 1000;
const MAX_BATCH_ATTEMPTS = 3;

type Pending = { line: number; group: TransferredUserGroup };

export type UserGroupTransferService = ReturnType<typeof createUserGroupTransferService>;

/**
 * Bulk export and import in JSON Lines. An import upserts by provided id in batches, each one
 * transaction; rerunning a file changes nothing, so an interrupted import is resumed by running it
 * again.
 */
export function createUserGroupTransferService({ store, cipher, clock }: { store: TransferStore; cipher: TokenCipher; clock: Clock }) {
  async function* exportUserGroups(caller: Caller, options: { includeTokens: boolean; pageSize?: number }): AsyncGenerator<TransferredUserGroup> {
    requireScope(caller, 'admin');
    // Data source ids are local to a database; provided ids travel.
    const providedIdOfDataSource = new Map(
      (await store.listDataSources(caller.tenant.workspaceId, caller.tenant.environment)).map((dataSource) => [dataSource.id, dataSource.providedId]),
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
          mapping: Object.fromEntries(group.mapping.map((entry) => [String(entry.schemaId), providedIdOfDataSource.get(entry.dataSourceId) ?? entry.dataSourceId])),
          api_environment_tag: group.environment,
          created_at: group.createdAt,
          updated_at: group.updatedAt,
          ...(options.includeTokens ? { token: cipher.decrypt(group.tokenCiphertext) } : {}),
        };
      }
      const last = page[page.length - 1];
      if (page.length < pageSize || last === undefined) return;
      afterTeamId = last.teamId;
    }
  }

  async function importUserGroups(caller: Caller, lines: AsyncIterable<ImportLine> | Iterable<ImportLine>, options: ImportOptions = {}): Promise<ImportSummary> {
    requireScope(caller, 'admin');
    const summary: ImportSummary = { created: 0, updated: 0, unchanged: 0, rejected: [] };
    const batchSize = options.batchSize ?? DEFAULT_BATCH;
    // One open batch per environment: a batch is one tenant's transaction, and files may interleave.
    const batches = new Map<Environment, { lines: Pending[]; providedIds: Set<string> }>();
    let done = 0;

    const flush = async (environment: Environment) => {
      const batch = batches.get(environment);
      if (!batch || batch.lines.length === 0) return;
      batches.delete(environment);
      await importBatch(inEnvironment(caller, environment), batch.lines, summary);
      done += batch.lines.length;
      options.onProgress?.(done + summary.rejected.length);
    };

    for await (const item of lines) {
      if ('error' in item) {
        summary.rejected.push({ line: item.line, reason: item.error });
        continue;
      }
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
    summary.rejected.sort((a, b) => a.line - b.line);
    return summary;
  }

  async function importBatch(caller: Caller, batch: Pending[], summary: ImportSummary): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      const plan = await planBatch(caller, batch);
      try {
        await store.writeUserGroups(plan.writes.map((write) => write.write), auditContextOf(clock, caller));
        for (const { write } of plan.writes) summary[write.kind === 'create' ? 'created' : 'updated'] += 1;
      } catch (error) {
        if (isAppError(error) && error.code === 'concurrent_change' && attempt < MAX_BATCH_ATTEMPTS) continue;
        if (isAppError(error) && error.code === 'unavailable') throw error;
        // One bad row fails its whole batch; write the rows one by one to learn which.
        await writeOneByOne(caller, plan.writes, summary);
      }
      summary.unchanged += plan.unchanged;
      summary.rejected.push(...plan.rejected);
      return;
    }
  }

  async function writeOneByOne(caller: Caller, writes: Array<{ line: number; write: UserGroupWrite }>, summary: ImportSummary): Promise<void> {
    for (const { line, write } of writes) {
      try {
        await store.writeUserGroups([write], auditContextOf(clock, caller));
        summary[write.kind === 'create' ? 'created' : 'updated'] += 1;
      } catch (error) {
        if (isAppError(error) && error.code === 'unavailable') throw error;
        summary.rejected.push({ line, reason: isAppError(error) ? error.message : 'The group could not be written.' });
      }
    }
  }

  async function planBatch(caller: Caller, batch: Pending[]) {
    const existing = new Map(
      (await store.findUserGroupsByProvidedIds(caller.tenant, batch.map(({ group }) => providedIdOf(group.provided_id)))).map((group) => [group.providedId, group]),
    );
    const resolve = await createMappingResolver(store, caller.tenant, batch.flatMap(({ group }) => (group.mapping ? [group.mapping] : [])));
    const writes: Array<{ line: number; write: UserGroupWrite }> = [];
    const rejected: ImportSummary['rejected'] = [];
    let unchanged = 0;
    for (const { line, group } of batch) {
      try {
        const write = planWrite(caller, group, existing.get(providedIdOf(group.provided_id)), resolve);
        if (write) writes.push({ line, write });
        else unchanged += 1;
      } catch (error) {
        if (!isAppError(error)) throw error;
        rejected.push({ line, reason: error.message });
      }
    }
    return { writes, rejected, unchanged };
  }

  function planWrite(
    caller: Caller,
    group: TransferredUserGroup,
    existing: UserGroupRecord | undefined,
    resolve: MappingResolver,
  ): UserGroupWrite | null {
    const providedId = providedIdOf(group.provided_id);
    if (group.properties !== undefined) assertPropertiesWithinLimits(group.properties);
    if (group.token !== undefined && !isUserGroupTokenShaped(group.token)) {
      throw new AppError('invalid_field', '"token" must be ugt_ followed by 64 lowercase hex characters.', { field: 'token' });
    }
    const mapping = group.mapping === undefined ? undefined : resolve(group.mapping);
    const tokenFields = (token: string) => ({ tokenHash: hashSecret(token), tokenCiphertext: cipher.encrypt(token) });
    const now = clock();

    if (!existing) {
      const content = { providedId, name: group.name ?? providedId, properties: group.properties ?? null, mapping: mapping ?? [] };
      return {
        kind: 'create',
        group: { tenant: caller.tenant, ...content, createdAt: now, ...tokenFields(group.token ?? generateUserGroupToken()) },
        changes: wholeGroupChanges(content, true),
      };
    }
    const requested: UserGroupPatch = {
      ...(group.name !== undefined ? { name: group.name } : {}),
      ...(group.properties !== undefined ? { properties: group.properties } : {}),
      ...(mapping !== undefined ? { mapping } : {}),
      // Encrypting costs a little; only do it when the token actually differs.
      ...(group.token !== undefined && hashSecret(group.token) !== existing.tokenHash ? tokenFields(group.token) : {}),
    };
    const { patch, changes } = diffUserGroup(existing, requested);
    if (Object.keys(changes).length === 0) return null;
    return { kind: 'update', update: { tenant: caller.tenant, teamId: existing.teamId, expectedVersion: existing.version, patch, updatedAt: now }, changes };
  }


  return { exportUserGroups, importUserGroups };
}
