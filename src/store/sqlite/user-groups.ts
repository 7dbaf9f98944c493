import type { Database, Statement } from 'better-sqlite3';
import { HIERARCHY_READ_LIMIT } from '../../domain/user-groups/hierarchy.rules.js';
import type { ApiTokenRecord } from '../../domain/api-tokens/api-token.records.js';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type { MappingEntry, NewUserGroup, UserGroupRecord } from '../../domain/user-groups/user-group.records.js';
import type { Tenant } from '../../domain/tenancy.js';
import {
  batchWriteEntry,
  batchWriteFailure,
  groupAudit,
  groupEntry,
} from '../../domain/user-groups/user-groups.rules.js';
import type { GroupIdentity } from '../../domain/user-groups/user-groups.rules.js';
import type { Audited } from '../../domain/audit/audit-entry.js';
import type { UserGroupLink, UserGroupSyncStore } from '../../domain/user-group-sync/user-group-sync.port.js';
import { failure } from '../../domain/errors.js';
import type {
  BatchedUserGroupReads,
  UserGroupDeletion,
  UserGroupLookup,
  UserGroupLookupAnswer,
  UserGroupLookupKey,
  UserGroupQuery,
  UserGroupStore,
  UserGroupTokenRotation,
  UserGroupUpdate,
  UserGroupWrite,
} from '../../domain/user-groups/user-groups.port.js';
import { assertMergedSizeFromRow, mergedSizeChains, parentTeamIdFromRow } from '../user-group-records.js';
import {
  INSERT_COLUMNS,
  insertParameters,
  insertValues,
  patchAssignments,
  groupPatchParameters,
  GROUP_COLUMN,
} from '../user-group-columns.js';
import type { MergedSizeRow, ParentLinkRow } from '../user-group-records.js';
import {
  assertTokenPatchComplete,
  mergedSizeWriteOfUpdate,
  type MergedSizeWrite,
} from '../../domain/user-groups/user-group-patch.rules.js';
import { userGroupSearchPlan } from '../../domain/user-groups/user-group-search.rules.js';
import { deletionRefusal } from '../../domain/user-groups/user-group-deletion.rules.js';
import { dataSourceRowId, schemaRowId } from '../catalogue-numbers.js';
import { IN_TEAM_ID_GAP, TEAM_ID_GAP_SQL } from '../team-id-gaps.js';
import { gapsAfterKeeping, type TeamIdGap } from '../../domain/user-groups/team-ids.rules.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './busy-retry.js';
import { preparedOnFirstUse } from './prepared.js';
import { containsPattern } from '../contains-pattern.js';

import {
  CASEFOLD_FUNCTION,
  casefold,
  decodeUserGroupRow,
  likeCanDecide,
  RETURNING_IDENTITY,
  SELECT_GROUP,
  type SqliteUserGroupCells,
} from './user-group-rows.js';

export { decodeUserGroupRow, SELECT_GROUP, type SqliteUserGroupCells } from './user-group-rows.js';

/** The live API token with this hash, or null: the engine's own (cached) token read. */
type LiveApiTokenRead = (tokenHash: string) => ApiTokenRecord | null;

export function userGroupMethods(
  db: Database,
  audit: AuditEvents,
  liveApiToken: LiveApiTokenRead,
): Synchronous<Omit<UserGroupStore, BatchedUserGroupReads> & UserGroupSyncStore> {
  // The group reads, in raw mode (SqliteUserGroupCells).
  const reads = preparedOnFirstUse(
    db,
    {
      byProvidedId: `${SELECT_GROUP} WHERE g.workspace_id = ? AND g.environment = ? AND g.provided_id = ?`,
      byTokenHash: `${SELECT_GROUP} WHERE g.token_hash = ? AND g.workspace_id = ? AND g.environment = ?`,
      byTeamId: `${SELECT_GROUP} WHERE g.team_id = ?`,
      byTeamIdInTenant: `${SELECT_GROUP} WHERE g.team_id = ? AND g.workspace_id = ? AND g.environment = ?`,
      // A JSON array parameter keeps one prepared statement for any number of ids. The unary + keeps
      // the planner from walking the whole tenant in team_id order instead of probing the unique
      // (workspace_id, environment, provided_id) index once per id: a batch of an import asks for 1000.
      byProvidedIds: `${SELECT_GROUP} WHERE g.workspace_id = ? AND g.environment = ?
      AND g.provided_id IN (SELECT value FROM json_each(?)) ORDER BY +g.team_id`,
      // Walks the tenant in team_id order (index user_groups_tenant) and stops at the limit. The name
      // substring test makes any search a scan of the tenant; the provided-id prefix is a range because
      // that is exact for every string and cheap. length() <> octet_length() spots a non-ASCII name.
      list: `${SELECT_GROUP}
      WHERE g.workspace_id = @workspaceId AND g.environment = @environment AND g.team_id > @afterTeamId
        AND (@parent IS NULL OR g.parent_team_id = (SELECT p.team_id FROM user_groups p
          WHERE p.workspace_id = @workspaceId AND p.environment = @environment AND p.provided_id = @parent))
        AND (@tag IS NULL OR EXISTS (SELECT 1 FROM json_each(g.${GROUP_COLUMN.tags}) WHERE json_each.value = @tag))
        AND (@isDemoGroup IS NULL OR g.${GROUP_COLUMN.isDemoGroup} = @isDemoGroup)
        AND (@search IS NULL
          OR (g.provided_id >= @search AND (@searchEnd IS NULL OR g.provided_id < @searchEnd))
          OR CASE WHEN @likeCanDecide AND length(g.name) = octet_length(g.name)
            THEN g.name LIKE @namePattern ESCAPE '\\'
            ELSE instr(${CASEFOLD_FUNCTION}(g.name), @foldedSearch) > 0 END)
      ORDER BY g.team_id LIMIT @limit`,
    },
    { raw: true },
  );
  const sql = preparedOnFirstUse(db, {
    // A requested team_id never issued is kept: above AUTOINCREMENT's high-water mark (which then
    // follows it) or in a gap that mark jumped over (team-ids.rules.ts); otherwise NULL draws the next one.
    insert: `INSERT INTO user_groups (${INSERT_COLUMNS})
      VALUES (${insertValues(
        'sqlite',
        `CASE WHEN @teamId > coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'user_groups'), 0)
          OR ${IN_TEAM_ID_GAP} THEN @teamId END`,
      )})
      ON CONFLICT (workspace_id, environment, provided_id) DO NOTHING RETURNING team_id`,
    // One statement for every patch shape: a field is written only when its flag is set.
    update: `UPDATE user_groups SET
      ${patchAssignments('sqlite')}
      WHERE team_id = @teamId AND workspace_id = @workspaceId AND environment = @environment
        AND version = @expectedVersion
      ${RETURNING_IDENTITY}`,
    rotate: `UPDATE user_groups SET
        token_hash = @newTokenHash, ${GROUP_COLUMN.tokenCiphertext} = @newTokenCiphertext,
        ${GROUP_COLUMN.tokenGeneration} = ${GROUP_COLUMN.tokenGeneration} + 1, version = version + 1, updated_at = @updatedAt
      WHERE token_hash = @currentTokenHash AND workspace_id = @workspaceId AND environment = @environment
      RETURNING team_id`,
    delete: `DELETE FROM user_groups
      WHERE team_id = ? AND workspace_id = ? AND environment = ? AND version = ?
      ${RETURNING_IDENTITY}`,
    // The would-be parent's chain up to the root and the height of the group's own subtree, bounded
    // one level past the depth rule: the walk stays SQL, the refusal is hierarchy.rules.ts' (docs/adr/0021-rules-modules-and-domain-ports.md).
    parentLink: `WITH RECURSIVE chain(team_id, parent_team_id, level) AS (
        SELECT team_id, parent_team_id, 1 FROM user_groups
          WHERE workspace_id = @workspaceId AND environment = @environment AND provided_id = @parentProvidedId
        UNION ALL
        SELECT u.team_id, u.parent_team_id, c.level + 1 FROM user_groups u JOIN chain c ON u.team_id = c.parent_team_id
          WHERE c.level < ${HIERARCHY_READ_LIMIT}),
      subtree(team_id, level) AS (
        SELECT @teamId, 1 WHERE @teamId IS NOT NULL
        UNION ALL
        SELECT u.team_id, s.level + 1 FROM user_groups u JOIN subtree s ON u.parent_team_id = s.team_id
          WHERE s.level < ${HIERARCHY_READ_LIMIT})
      SELECT (SELECT json_group_array(json_array(level, team_id)) FROM chain) AS chain,
        (SELECT coalesce(max(level), 1) FROM subtree) AS height`,
    // What a write's change of merged properties is checked on (src/domain/user-groups/hierarchy.rules.ts decides).
    mergedSizes: `${mergedSizeChains({ bigint: '' })}
      SELECT (SELECT provided_id FROM target) AS provided_id, (SELECT properties FROM target) AS own,
        (SELECT rules FROM target) AS own_rules,
        (SELECT json_group_array(json_array(level, json(properties), rules)) FROM old_chain) AS old_chain,
        (SELECT json_group_array(json_array(level, json(properties), rules)) FROM new_chain) AS new_chain,
        (SELECT json_group_array(json_array(level, team_id, parent_team_id, provided_id, json(properties), rules)) FROM subtree)
          AS subtree`,
    children: 'SELECT count(*) AS children FROM user_groups WHERE parent_team_id = ?',
    // A sync's plan (docs/api.md#sync-tenants-as-code): the children by user_groups_parent, never a walk of the tenant per
    // parent; the unary + keeps the planner off user_groups_tenant for the tenant's check.
    childLinks: `SELECT c.team_id AS teamId, c.provided_id AS providedId, c.parent_team_id AS parentTeamId
      FROM user_groups c
      WHERE c.parent_team_id IN (SELECT value FROM json_each(?)) AND +c.workspace_id = ? AND +c.environment = ?
      ORDER BY c.team_id`,
    // What a prune counts: the tenant in team_id order (user_groups_tenant), reading the tags alone.
    taggedLinks: `SELECT g.team_id AS teamId, g.provided_id AS providedId, g.parent_team_id AS parentTeamId
      FROM user_groups g
      WHERE g.workspace_id = @workspaceId AND g.environment = @environment AND g.team_id > @afterTeamId
        AND EXISTS (SELECT 1 FROM json_each(g.${GROUP_COLUMN.tags}) WHERE json_each.value = @tag)
      ORDER BY g.team_id LIMIT @limit`,
    // Numbers to row ids: a data source deleted since the domain's check leaves NULL, which NOT NULL refuses.
    insertMapping: `INSERT INTO user_group_mappings (team_id, schema_id, data_source_id, schema_number, data_source_number)
      VALUES (@teamId, ${schemaRowId('@workspaceId', '@schemaId')}, ${dataSourceRowId('@workspaceId', '@dataSourceId')},
        @schemaId, @dataSourceId)`,
    clearMapping: 'DELETE FROM user_group_mappings WHERE team_id = ?',
    teamIdMark: "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'user_groups'), 0) AS mark",
    teamIdGapHolding: TEAM_ID_GAP_SQL.holding,
    removeTeamIdGap: TEAM_ID_GAP_SQL.remove,
    addTeamIdGap: TEAM_ID_GAP_SQL.add,
  });

  /** After an insert that kept `teamId`: the gaps follow (mark: the high-water mark before the insert). */
  const recordKeptTeamId = (teamId: number, mark: number): void => {
    const holding = (sql.teamIdGapHolding.get({ teamId }) as TeamIdGap | undefined) ?? null;
    const { remove, add } = gapsAfterKeeping(teamId, mark, holding);
    if (remove) sql.removeTeamIdGap.run({ low: remove.low });
    for (const gap of add) sql.addTeamIdGap.run({ ...gap });
  };

  db.function(CASEFOLD_FUNCTION, { deterministic: true }, (text: unknown) =>
    typeof text === 'string' ? casefold(text) : null,
  );

  const findOne = (statement: Statement, ...params: unknown[]): UserGroupRecord | null => {
    const cells = statement.get(...params) as SqliteUserGroupCells | undefined;
    return cells ? decodeUserGroupRow(cells) : null;
  };

  const byProvidedId = (tenant: Tenant, providedId: string) =>
    findOne(reads.byProvidedId, tenant.workspaceId, tenant.environment, providedId);

  const byTokenHash = (tenant: Tenant, tokenHash: string) =>
    findOne(reads.byTokenHash, tokenHash, tenant.workspaceId, tenant.environment);

  /*
   * The lookups of one batch (src/store/hot-reads.ts) in one read transaction: one snapshot, and one
   * read lock of the WAL (two fcntl calls) for all of them. An API token to confirm is read through
   * the engine's cached token read (live-token-cache.ts), whose PRAGMA data_version check then runs
   * inside the same snapshot.
   */
  const lookUp = db.transaction((by: UserGroupLookupKey, lookups: UserGroupLookup[]): UserGroupLookupAnswer[] =>
    lookups.map(({ tenant, key, apiToken }) => {
      const group = by === 'providedId' ? byProvidedId(tenant, key) : byTokenHash(tenant, key);
      if (!apiToken) return { group };
      const token = liveApiToken(apiToken.hash);
      return { group, apiToken: { live: token !== null, rateLimit: token?.rateLimit ?? null } };
    }),
  );

  /** Re-reads a row this transaction just wrote, so it is there by construction. */
  const written = (teamId: number): UserGroupRecord => {
    const group = findOne(reads.byTeamId, teamId);
    if (!group) throw new Error(`user group ${teamId} vanished inside its own transaction`);
    return group;
  };

  const insertMapping = (teamId: number, workspaceId: number, mapping: MappingEntry[]): void => {
    for (const entry of mapping) sql.insertMapping.run({ teamId, workspaceId, ...entry });
  };

  /**
   * The team id of the checked parent (docs/api.md#hierarchy-demo-groups-and-tags), read inside the write's transaction, which SQLite's
   * one write lock serialises with every other tree change; null detaches, undefined leaves the link.
   */
  const parentTeamIdFor = (
    tenant: Tenant,
    parentProvidedId: string | null | undefined,
    teamId?: number,
  ): number | null | undefined => {
    if (parentProvidedId === undefined || parentProvidedId === null) return parentProvidedId;
    const row = sql.parentLink.get({ ...tenant, parentProvidedId, teamId: teamId ?? null }) as {
      chain: string;
      height: number;
    };
    return parentTeamIdFromRow(
      parentProvidedId,
      { chain: JSON.parse(row.chain) as ParentLinkRow['chain'], height: row.height },
      teamId,
    );
  };

  /**
   * Refuses the write if it would grow some group's merged properties past the bound, read inside the
   * write's transaction, which SQLite's one write lock serialises with every other change of the tree.
   */
  const assertMergedSize = (tenant: Tenant, write: MergedSizeWrite): void => {
    const row = sql.mergedSizes.get({
      ...tenant,
      teamId: write.teamId ?? null,
      parentTeamId: write.parentTeamId ?? null,
    }) as Record<Exclude<keyof MergedSizeRow, 'own_rules'>, string | null> & { own_rules: number | null };
    const parse = <T>(text: string | null) => (text === null ? null : (JSON.parse(text) as T));
    assertMergedSizeFromRow(
      {
        provided_id: row.provided_id,
        own: parse(row.own),
        own_rules: row.own_rules,
        old_chain: parse(row.old_chain) ?? [],
        new_chain: parse(row.new_chain) ?? [],
        subtree: parse(row.subtree) ?? [],
      },
      write,
    );
  };

  /** Inserts the group and its mapping; undefined (and nothing written) when its provided id exists. */
  const insertGroup = (group: NewUserGroup): GroupIdentity | undefined => {
    const { tenant } = group;
    // The parent is checked only for a group that will be created; one that exists is left as it is.
    if (group.parentProvidedId !== null && byProvidedId(tenant, group.providedId)) return undefined;
    const parentTeamId = parentTeamIdFor(tenant, group.parentProvidedId) ?? null;
    if (parentTeamId !== null)
      assertMergedSize(tenant, {
        providedId: group.providedId,
        properties: group.properties,
        accessRules: group.accessRules.length,
        parentTeamId,
      });
    const mark = group.teamId === undefined ? 0 : (sql.teamIdMark.get() as { mark: number }).mark;
    const inserted = sql.insert.get(insertParameters('sqlite', group, parentTeamId)) as { team_id: number } | undefined;
    if (!inserted) return undefined;
    if (group.teamId !== undefined && inserted.team_id === group.teamId) recordKeptTeamId(group.teamId, mark);
    insertMapping(inserted.team_id, tenant.workspaceId, group.mapping);
    return { teamId: inserted.team_id, ...tenant, providedId: group.providedId };
  };

  /** Applies the patch if the row still has the expected version; undefined (and nothing written) otherwise. */
  const applyUpdate = ({
    tenant,
    teamId,
    expectedVersion,
    patch,
    updatedAt,
  }: UserGroupUpdate): GroupIdentity | undefined => {
    assertTokenPatchComplete(patch);
    const parentTeamId = parentTeamIdFor(tenant, patch.parentProvidedId, teamId);
    const sizeCheck = mergedSizeWriteOfUpdate(teamId, patch, parentTeamId);
    if (sizeCheck) assertMergedSize(tenant, sizeCheck);
    const updated = sql.update.get({
      ...tenant,
      teamId,
      expectedVersion,
      updatedAt,
      ...groupPatchParameters('sqlite', { ...patch, parentTeamId }),
    }) as GroupIdentity | undefined;
    if (updated && patch.mapping) {
      sql.clearMapping.run(teamId);
      insertMapping(teamId, tenant.workspaceId, patch.mapping);
    }
    return updated;
  };

  const insertIfAbsent = audit.withAudit((context: AuditContext, group: NewUserGroup) => {
    const inserted = insertGroup(group);
    if (!inserted) {
      const existing = byProvidedId(group.tenant, group.providedId);
      if (!existing) throw new Error('user group insert conflicted with a row that cannot be found');
      return { result: { group: existing, created: false }, entries: [] };
    }
    const created = written(inserted.teamId);
    return {
      result: { group: created, created: true },
      entries: [groupEntry(groupAudit('user_group.created', context.changes), created)],
    };
  });

  const update = audit.withAudit((context: AuditContext, groupUpdate: UserGroupUpdate) => {
    const updated = applyUpdate(groupUpdate);
    if (!updated) return { result: null, entries: [] };
    const group = written(updated.teamId);
    return { result: group, entries: [groupEntry(groupAudit('user_group.updated', context.changes), group)] };
  });

  // A batch of writes (an import's batch, a sync), either policy: every write under one write lock,
  // in their order, prepared statements only; the first refusal rolls all of it back. No re-reads (a
  // webhook subject reads the group back only when an endpoint wants it), but for a delete: its
  // webhook subject is the group as it was.
  const applyWrites = audit.withAudit((_context: AuditContext, tenant: Tenant, writes: UserGroupWrite[]) => {
    const entries = writes.map((write) => {
      try {
        if (write.kind === 'delete') {
          const { children } = sql.children.get(write.teamId) as { children: number };
          if (deletionRefusal(children)) throw failure.hasChildren(write.providedId, children);
          const before = findOne(reads.byTeamId, write.teamId);
          const deleted = sql.delete.get(
            write.teamId,
            tenant.workspaceId,
            tenant.environment,
            write.expectedVersion,
          ) as GroupIdentity | undefined;
          return batchWriteEntry(write, deleted, () => before!);
        }
        const row = write.kind === 'create' ? insertGroup(write.group) : applyUpdate(write.update);
        return batchWriteEntry(write, row, () => written(row!.teamId));
      } catch (error) {
        throw batchWriteFailure(write, error);
      }
    });
    return { result: undefined, entries };
  });

  const list = (query: UserGroupQuery): UserGroupRecord[] => {
    const plan = userGroupSearchPlan(query);
    const { search } = plan;
    // SQLite's own matching of names: LIKE where it decides, else case folded in JavaScript.
    const nameParams =
      search === null
        ? { likeCanDecide: 0, namePattern: null, foldedSearch: null }
        : {
            likeCanDecide: likeCanDecide(search) ? 1 : 0,
            namePattern: containsPattern(search),
            foldedSearch: casefold(search),
          };
    const rows = reads.list.all({
      ...query.tenant,
      ...plan,
      ...nameParams,
      isDemoGroup: plan.isDemoGroup === null ? null : Number(plan.isDemoGroup),
    }) as SqliteUserGroupCells[];
    return rows.map(decodeUserGroupRow);
  };

  const rotate = audit.withAudit((context: AuditContext, rotation: UserGroupTokenRotation) => {
    const rotated = sql.rotate.get({ ...rotation, ...rotation.tenant }) as { team_id: number } | undefined;
    if (!rotated) return { result: null, entries: [] };
    const group = written(rotated.team_id);
    return { result: group, entries: [groupEntry(groupAudit('user_group.token_rotated', context.changes), group)] };
  });

  const remove = audit.withAudit(
    (context: AuditContext, tenant: Tenant, teamId: number, expectedVersion: number): Audited<UserGroupDeletion> => {
      // Counted under the write lock, so no child can be linked between the count and the delete.
      const { children } = sql.children.get(teamId) as { children: number };
      const refusal = deletionRefusal(children);
      if (refusal) return { result: refusal, entries: [] };
      const before = findOne(reads.byTeamId, teamId);
      const deleted = sql.delete.get(teamId, tenant.workspaceId, tenant.environment, expectedVersion) as
        GroupIdentity | undefined;
      if (!deleted) return { result: { status: 'moved' }, entries: [] };
      // The group as it was: the row is gone, so its webhook subject comes from this snapshot.
      return {
        result: { status: 'deleted' },
        entries: [groupEntry(groupAudit('user_group.deleted', context.changes), deleted, () => before!)],
      };
    },
  );

  return {
    lookUpUserGroups: (by, lookups) => lookUp(by, lookups),
    findUserGroupsByProvidedIds: (tenant, providedIds) =>
      (
        reads.byProvidedIds.all(
          tenant.workspaceId,
          tenant.environment,
          JSON.stringify(providedIds),
        ) as SqliteUserGroupCells[]
      ).map(decodeUserGroupRow),
    findUserGroupByTeamId: (tenant, teamId) =>
      findOne(reads.byTeamIdInTenant, teamId, tenant.workspaceId, tenant.environment),
    listUserGroups: list,
    // One synchronous transaction whatever the policy: the write lock serialises it with every other
    // write, and nothing runs between its writes, so there is no moment to stop at.
    applyUserGroupWrites: (tenant, writes, context) => applyWrites(context, tenant, writes),
    listUserGroupChildren: (tenant, parentTeamIds) =>
      sql.childLinks.all(JSON.stringify(parentTeamIds), tenant.workspaceId, tenant.environment) as UserGroupLink[],
    listTaggedUserGroupLinks: (tenant, tag, { afterTeamId, limit }) =>
      sql.taggedLinks.all({ ...tenant, tag, afterTeamId: afterTeamId ?? 0, limit }) as UserGroupLink[],
    insertUserGroupIfAbsent: (group, context) => insertIfAbsent(context, group),
    updateUserGroup: (groupUpdate, context) => update(context, groupUpdate),
    rotateUserGroupToken: (rotation, context) => rotate(context, rotation),
    deleteUserGroup: (tenant, teamId, expectedVersion, context) => remove(context, tenant, teamId, expectedVersion),
  };
}
