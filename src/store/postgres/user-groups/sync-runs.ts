import { HIERARCHY_READ_LIMIT } from '../../../domain/user-groups/hierarchy.rules.js';
import type { AuditContext } from '../../../domain/audit/audit.records.js';
import type { NewUserGroup, UserGroupRecord } from '../../../domain/user-groups/user-group.records.js';
import type { Tenant } from '../../../domain/tenancy.js';
import type { AuditEntry } from '../../../domain/audit/audit-entry.js';
import type { SyncWrite } from '../../../domain/user-group-sync/user-group-sync.port.js';
import { syncWriteRuns, type SyncRun } from '../../../domain/user-group-sync/user-group-sync.rules.js';
import { batchWriteEntry, batchWriteFailure, batchWriteLost } from '../../../domain/user-groups/user-groups.rules.js';
import type { UserGroupWrite } from '../../../domain/user-groups/user-groups.port.js';
import type { JsonObject } from '../../../domain/common.records.js';
import { assertMergedSizeFromRow, MAX_ANCESTORS, parentTeamIdFromRow, RULE_COUNT } from '../../user-group-records.js';
import { pgNewGroupArrays, pgPatchArrays } from '../../user-group-columns.js';
import { deletionRefusal } from '../../../domain/user-groups/user-group-deletion.rules.js';
import { type AuditEvents } from '../audit-events.js';
import { failure } from '../../../domain/errors.js';
import type { Queryable } from '../postgres-database.js';
import { toNumber } from '../rows.js';
import type { Int8 } from '../rows.js';
import { statements } from '../statements.js';
import {
  decodeUserGroupRow,
  decodedJsonRow,
  GROUP_COLUMNS,
  ancestorsOf,
  mappingRowIds,
  mappingRows,
  newGroupColumns,
  findMany,
  type PostgresUserGroupRow,
  type PostgresUserGroupColumns,
} from './columns.js';
import { byProvidedId, readSql } from './reads.js';
import { lockTrees } from './trees.js';
import { insertGroup, applyUpdate, writeSql } from './group-writes.js';

import { singleSql } from './single-writes.js';

/** A sync run's creates: in the run's tenant, each with its checked parent. */
const RUN_CREATES = pgNewGroupArrays({ workspaceId: '@workspaceId::bigint', environment: '@environment::text' });
/** A sync run's updates write what changes neither tree nor merged facts (the mapping goes after). */
const RUN_UPDATES = pgPatchArrays(['name', 'isDemoGroup', 'tags'], 'user_groups', 'u');

/** A sync's lock and its runs: creates and plain updates, many to a statement. */
export const syncSql = statements(
  {
    // Syncs of one tenant one after the other (docs/api.md#sync-tenants-as-code), taken before the tree lock.
    // Tried, not waited for: another sync may hold it for longer than a statement may run.
    tryLockSync: `SELECT pg_try_advisory_xact_lock(hashtext('ugs.user_group_sync'), hashtext(@workspaceId::text || '.' || @environment)) AS locked`,
    // A sync's run: the chain of each would-be parent up to its root, as parentLink and mergedSizes
    // read it for one create (a new group's subtree is itself: height 1, no old chain).
    parentChains: `WITH RECURSIVE chain(parent_provided_id, team_id, parent_team_id, level, properties, rules) AS (
      SELECT provided_id, team_id, parent_team_id, 1, properties, ${RULE_COUNT('access_rules')} FROM user_groups
        WHERE workspace_id = @workspaceId AND environment = @environment AND provided_id = ANY(@parentProvidedIds::text[])
      UNION ALL
      SELECT c.parent_provided_id, u.team_id, u.parent_team_id, c.level + 1, u.properties, ${RULE_COUNT('u.access_rules')}
        FROM user_groups u JOIN chain c ON u.team_id = c.parent_team_id WHERE c.level < ${HIERARCHY_READ_LIMIT}
    )
    SELECT parent_provided_id, json_agg(json_build_array(level, team_id, properties, rules)) AS chain
    FROM chain GROUP BY parent_provided_id`,
    // A sync's run: its creates in one statement, in the run's order, each with its mapping rows (the
    // flat arrays @mappedProvidedIds, @schemaIds, @dataSourceIds). A provided id that exists by now
    // (a concurrent create) inserts nothing, which refuses the sync. The ancestors of a group created
    // under a parent are those this transaction's earlier statements left.
    insertRun: `WITH inserted AS (
      INSERT INTO user_groups (${RUN_CREATES.columns})
      SELECT ${RUN_CREATES.values('g')}
      FROM unnest(${RUN_CREATES.arrays}) WITH ORDINALITY AS g(${RUN_CREATES.aliases}, n)
      ORDER BY g.n
      ON CONFLICT (workspace_id, environment, provided_id) DO NOTHING
      RETURNING ${GROUP_COLUMNS}, ${ancestorsOf('user_groups')}
    ), mapped AS (
      INSERT INTO user_group_mappings (team_id, schema_id, data_source_id, schema_number, data_source_number)
      SELECT i.team_id, ${mappingRowIds('@workspaceId::bigint')}, m.schema_id, m.data_source_id
      FROM unnest(@mappedProvidedIds::text[], @schemaIds::bigint[], @dataSourceIds::bigint[]) AS m(provided_id, schema_id, data_source_id)
      JOIN inserted i ON i.provided_id = m.provided_id
    )
    SELECT * FROM inserted`,
    // A sync's run: its updates that change neither the tree nor merged properties or rules (name, demo
    // flag, tags; the mapping is written after), each only if its row still has the version the plan read.
    updateRun: `UPDATE user_groups SET
      ${RUN_UPDATES.assignments},
      version = user_groups.version + 1,
      updated_at = u.updated_at
    FROM unnest(@teamIds::bigint[], @expectedVersions::bigint[], ${RUN_UPDATES.arrays}, @updatedAts::timestamptz[])
      AS u(team_id, expected_version, ${RUN_UPDATES.aliases}, updated_at)
    WHERE user_groups.team_id = u.team_id AND user_groups.workspace_id = @workspaceId AND user_groups.environment = @environment
      AND user_groups.version = u.expected_version
    RETURNING user_groups.team_id`,
  },
  { prepared: true },
);

/** A sync's run is written this many steps to a statement, each far inside the statement timeout. */
const SYNC_RUN_STEPS = 1000;

type SyncCreate = Extract<SyncWrite, { kind: 'create' }>;

/** A cell of a would-be parent's chain (`parentChains`): level (1: the parent), team id, properties, rule count. */
type ParentChainCell = [number, number, JsonObject | null, number];

/** How long an apply waits for another sync of its tenant, in tries this far apart. */
const SYNC_LOCK_WAIT_MS = 120_000;
const SYNC_LOCK_PAUSE_MS = 50;

/**
 * One write on its own, as the single operations write it: a sync's step outside its runs, and an
 * import batch's update or delete.
 */
export async function applyWriteAlone(tx: Queryable, tenant: Tenant, write: UserGroupWrite): Promise<AuditEntry> {
  try {
    if (write.kind === 'delete') {
      const [outcome] = await tx.rows<{ children: Int8; deleted: PostgresUserGroupRow | null }>(
        singleSql.delete({ ...tenant, teamId: write.teamId, expectedVersion: write.expectedVersion }),
      );
      const children = outcome ? toNumber(outcome.children) : 0;
      if (deletionRefusal(children)) throw failure.hasChildren(write.providedId, children);
      const group = outcome?.deleted ? decodeUserGroupRow(decodedJsonRow(outcome.deleted)) : undefined;
      return batchWriteEntry(write, group, () => group!);
    }
    const row =
      write.kind === 'create' ? await insertGroup(tx, write.group) : (await applyUpdate(tx, write.update))?.group;
    return batchWriteEntry(write, row, () => row!);
  } catch (error) {
    throw batchWriteFailure(write, error);
  }
}

/**
 * The all-or-nothing policy of applyUserGroupWrites, a sync's apply (docs/api.md#sync-tenants-as-code):
 * all of it in one transaction, or nothing.
 */
export function allOrNothingWrites(audit: AuditEvents) {
  /**
   * A run of a sync's steps (`syncWriteRuns`) in a few statements whatever its length: the
   * trees of the creates' parents locked and their chains read, its updates written, its creates
   * checked on those chains, then written up to the first that a check refuses. The run then fails at
   * its first step in the plan's order that wrote nothing or was refused, as writing the steps one by
   * one would (a line's refusal naming its line); else its audit entries come in the plan's order.
   */
  const applySyncRun = async (
    tx: Queryable,
    tenant: Tenant,
    { updates, creates, steps }: Extract<SyncRun<NewUserGroup>, { kind: 'batch' }>,
  ): Promise<AuditEntry[]> => {
    const parents = [
      ...new Set(creates.flatMap(({ group }) => (group.parentProvidedId === null ? [] : [group.parentProvidedId]))),
    ];
    const chains = new Map<string, ParentChainCell[]>();
    if (parents.length > 0) {
      await lockTrees(tx, tenant, [], parents);
      const rows = await tx.rows<{ parent_provided_id: string; chain: ParentChainCell[] }>(
        syncSql.parentChains({ ...tenant, parentProvidedIds: parents }),
      );
      for (const row of rows) chains.set(row.parent_provided_id, row.chain);
    }
    const updated = new Map<number, UserGroupRecord>();
    if (updates.length > 0) await writeSyncUpdates(tx, tenant, updates, updated);

    // The creates' checks, up to the first refusal: the creates before it are written, as one by one.
    const checked: Array<{ group: NewUserGroup; parentTeamId: number | null }> = [];
    let refused: { step: SyncCreate; error: unknown } | undefined;
    for (const step of creates) {
      try {
        checked.push({ group: step.group, parentTeamId: parentOfCreate(step.group, chains) });
      } catch (error) {
        refused = { step, error };
        break;
      }
    }
    const created = await insertSyncCreates(tx, tenant, checked);

    const entries: AuditEntry[] = [];
    for (const step of steps) {
      if (step === refused?.step) {
        // One by one, a create whose provided id exists by now is not checked: the plan moved on.
        const exists = await byProvidedId(tx, tenant, refused.step.group.providedId);
        throw batchWriteFailure(step, exists ? batchWriteLost(step) : refused.error);
      }
      const group =
        step.kind === 'create'
          ? created.get(step.group.providedId)
          : step.kind === 'update'
            ? updated.get(step.update.teamId)
            : undefined;
      try {
        entries.push(batchWriteEntry(step, group, () => group!));
      } catch (error) {
        throw batchWriteFailure(step, error);
      }
    }
    return entries;
  };

  /**
   * A run's creates, checked, in one statement with their mappings; each created group by its provided
   * id (one whose provided id exists by now is absent).
   */
  const insertSyncCreates = async (
    tx: Queryable,
    tenant: Tenant,
    creates: Array<{ group: NewUserGroup; parentTeamId: number | null }>,
  ): Promise<Map<string, UserGroupRecord>> => {
    const created = new Map<string, UserGroupRecord>();
    if (creates.length === 0) return created;
    const groups = creates.map(({ group }) => group);
    const { keys: mappedProvidedIds, ...mapped } = mappingRows(
      groups.map((group) => ({ key: group.providedId, mapping: group.mapping })),
    );
    const rows = await tx.rows<PostgresUserGroupColumns>(
      syncSql.insertRun({
        ...tenant,
        ...newGroupColumns(groups),
        parentTeamIds: creates.map(({ parentTeamId }) => parentTeamId),
        mappedProvidedIds,
        ...mapped,
      }),
    );
    const mappings = new Map(groups.map((group) => [group.providedId, group.mapping]));
    for (const row of rows) {
      // RETURNING cannot see the mapping rows its sibling CTE inserts; they are the input.
      const mapping = (mappings.get(row.provided_id) ?? []).map((entry): [number, number] => [
        entry.schemaId,
        entry.dataSourceId,
      ]);
      created.set(row.provided_id, decodeUserGroupRow({ ...row, mapping }));
    }
    return created;
  };

  /**
   * The parent a create of a run links to (null: a root), once the rules have checked the link and the
   * merged bounds on the would-be parent's chain as this transaction reads it (parentLink and
   * mergedSizes for one create: a new group's subtree is itself alone).
   */
  const parentOfCreate = (group: NewUserGroup, chains: Map<string, ParentChainCell[]>): number | null => {
    if (group.parentProvidedId === null) return null;
    const chain = chains.get(group.parentProvidedId) ?? [];
    const parentTeamId = parentTeamIdFromRow(
      group.parentProvidedId,
      { chain: chain.map(([level, teamId]) => [level, teamId]), height: 1 },
      undefined,
    );
    assertMergedSizeFromRow(
      {
        provided_id: null,
        own: null,
        own_rules: null,
        old_chain: [],
        new_chain: chain
          .filter(([level]) => level <= MAX_ANCESTORS)
          .map(([level, , properties, rules]) => [level, properties, rules]),
        subtree: [],
      },
      {
        providedId: group.providedId,
        properties: group.properties,
        accessRules: group.accessRules.length,
        parentTeamId,
      },
    );
    return parentTeamId;
  };

  /**
   * A run's updates: one statement for the rows still at the version the plan read, their new mappings
   * in two more, then the written groups read back (each as the run leaves it, ancestors included) into
   * `updated`; a row that moved on is absent.
   */
  const writeSyncUpdates = async (
    tx: Queryable,
    tenant: Tenant,
    updates: Array<Extract<SyncWrite, { kind: 'update' }>>,
    updated: Map<number, UserGroupRecord>,
  ) => {
    const patches = updates.map(({ update }) => update);
    const rows = await tx.rows<{ team_id: Int8 }>(
      syncSql.updateRun({
        ...tenant,
        teamIds: patches.map((update) => update.teamId),
        expectedVersions: patches.map((update) => update.expectedVersion),
        ...RUN_UPDATES.parameters(patches.map((update) => update.patch)),
        updatedAts: patches.map((update) => update.updatedAt),
      }),
    );
    const written = new Set(rows.map((row) => toNumber(row.team_id)));
    if (written.size === 0) return;
    const remapped = patches.flatMap(({ teamId, patch }) =>
      patch.mapping !== undefined && written.has(teamId) ? [{ key: teamId, mapping: patch.mapping }] : [],
    );
    if (remapped.length > 0) {
      await tx.rows(writeSql.clearMappings({ teamIds: remapped.map(({ key }) => key) }));
      const { keys: teamIds, ...mapped } = mappingRows(remapped);
      await tx.rows(writeSql.insertMappings({ workspaceId: tenant.workspaceId, teamIds, ...mapped }));
    }
    for (const group of await findMany(tx, readSql.byTeamIds({ ...tenant, teamIds: [...written] })))
      updated.set(group.teamId, group);
  };

  // A sync (docs/api.md#sync-tenants-as-code): under the tenant's sync lock, the steps in the plan's order, in runs written a
  // few statements each and, for deletes and the updates that move a group or change what its
  // tree merges, one by one. Each locks the roots of the trees it touches as the single operations do
  // (docs/adr/0012-tree-root-locks.md) and holds them to the end, so every parent and merged-size check reads a tree no other
  // write changes; the first refusal rolls all of it back, and a deadlock with another writer runs the
  // whole transaction again. Up to 10 000 audit entries: written 500 to a statement, each far inside
  // the statement timeout.
  const applySync = audit.withChunkedAudit(
    500,
    async (tx, _context: AuditContext, tenant: Tenant, steps: SyncWrite[], signal: AbortSignal | undefined) => {
      // Waits for another sync of the tenant in short tries, each far inside the statement timeout.
      for (const deadline = Date.now() + SYNC_LOCK_WAIT_MS; ;) {
        const [row] = await tx.rows<{ locked: boolean }>(syncSql.tryLockSync({ ...tenant }));
        if (row?.locked) break;
        if (Date.now() > deadline) throw failure.syncPlanMoved();
        await new Promise((resolve) => setTimeout(resolve, SYNC_LOCK_PAUSE_MS));
      }
      // No tenant-wide tree lock (docs/adr/0012-tree-root-locks.md): each run or step locks the roots of the trees it touches, as
      // the single operations do, and holds them to the end of the apply.
      const entries: AuditEntry[] = [];
      for (const run of syncWriteRuns(steps, SYNC_RUN_STEPS)) {
        // Stopped (the server stops, the client has gone): the transaction rolls back, nothing written.
        if (signal?.aborted) throw failure.syncStopped();
        if (run.kind === 'single') entries.push(await applyWriteAlone(tx, tenant, run.step));
        else entries.push(...(await applySyncRun(tx, tenant, run)));
      }
      return { result: undefined, entries };
    },
  );
  return (tenant: Tenant, writes: SyncWrite[], context: AuditContext, signal: AbortSignal | undefined) =>
    applySync(context, tenant, writes, signal);
}
