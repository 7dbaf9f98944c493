import type { Database, Statement } from 'better-sqlite3';
import type { AuditContext, JsonObject, MappingEntry, NewUserGroup, UserGroupRecord } from '../../domain/models.js';
import type { Tenant } from '../../domain/tenancy.js';
import { groupEntry } from '../audit-entries.js';
import type { AuditEntry, GroupIdentity } from '../audit-entries.js';
import type { UserGroupQuery, UserGroupStore, UserGroupTokenRotation, UserGroupUpdate, UserGroupWrite } from '../store.js';
import {
  assertTokenPatchComplete,
  concurrentChange,
  PATCHABLE_GROUP_COLUMNS,
  patchParameters,
  prefixUpperBound,
  serializeProperties,
  userGroupFromRow,
} from '../user-group-records.js';
import type { UserGroupRow } from '../user-group-records.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './guard.js';
import { preparedOnFirstUse } from './prepared.js';

/** user_groups as SQLite returns it: properties and mapping are JSON text. */
type SqliteUserGroupRow = Omit<UserGroupRow, 'properties' | 'mapping'> & { properties: string | null; mapping: string };

// The mapping rides along as JSON so that every lookup is a single statement.
const SELECT_GROUP = `SELECT g.*,
  (SELECT json_group_array(json_array(m.schema_id, m.data_source_id))
     FROM user_group_mappings m WHERE m.team_id = g.team_id) AS mapping
  FROM user_groups g`;

function toUserGroup(row: SqliteUserGroupRow): UserGroupRecord {
  return userGroupFromRow({
    ...row,
    properties: row.properties === null ? null : (JSON.parse(row.properties) as JsonObject),
    mapping: JSON.parse(row.mapping) as [number, number][],
  });
}

const RETURNING_IDENTITY = 'RETURNING team_id AS teamId, workspace_id AS workspaceId, environment, provided_id AS providedId';

/**
 * Case folding for name search. SQLite's LIKE folds ASCII letters only, so it decides alone only
 * when both the name and the search text are ASCII; otherwise this JavaScript function folds them.
 */
const CASEFOLD_FUNCTION = 'ugs_casefold';

function casefold(text: string): string {
  return text.toLowerCase();
}

/** A LIKE pattern (with ESCAPE '\') matching names that contain `text` literally, wildcards included. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`;
}

/** Longer LIKE patterns hit SQLITE_MAX_LIKE_PATTERN_LENGTH; the folding path has no such limit. */
const MAX_LIKE_SEARCH_LENGTH = 1000;

function likeCanDecide(search: string): boolean {
  return search.length <= MAX_LIKE_SEARCH_LENGTH && Buffer.byteLength(search) === search.length;
}

export function userGroupMethods(db: Database, audit: AuditEvents): Synchronous<UserGroupStore> {
  const sql = preparedOnFirstUse(db, {
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
        AND (@search IS NULL
          OR (g.provided_id >= @search AND (@searchEnd IS NULL OR g.provided_id < @searchEnd))
          OR CASE WHEN @likeCanDecide AND length(g.name) = octet_length(g.name)
            THEN g.name LIKE @namePattern ESCAPE '\\'
            ELSE instr(${CASEFOLD_FUNCTION}(g.name), @foldedSearch) > 0 END)
      ORDER BY g.team_id LIMIT @limit`,
    insert: `INSERT INTO user_groups
      (workspace_id, environment, provided_id, name, token_hash, token_ciphertext, properties, created_at, updated_at)
      VALUES (@workspaceId, @environment, @providedId, @name, @tokenHash, @tokenCiphertext, @properties, @createdAt, @createdAt)
      ON CONFLICT (workspace_id, environment, provided_id) DO NOTHING RETURNING team_id`,
    // One statement for every patch shape: a field is written only when its flag is set.
    update: `UPDATE user_groups SET
        provided_id = CASE WHEN @setProvidedId THEN @providedId ELSE provided_id END,
        name = CASE WHEN @setName THEN @name ELSE name END,
        properties = CASE WHEN @setProperties THEN @properties ELSE properties END,
        token_hash = CASE WHEN @setTokenHash THEN @tokenHash ELSE token_hash END,
        token_ciphertext = CASE WHEN @setTokenCiphertext THEN @tokenCiphertext ELSE token_ciphertext END,
        token_generation = token_generation + CASE WHEN @setTokenHash THEN 1 ELSE 0 END,
        version = version + 1,
        updated_at = @updatedAt
      WHERE team_id = @teamId AND workspace_id = @workspaceId AND environment = @environment
        AND version = @expectedVersion
      ${RETURNING_IDENTITY}`,
    rotate: `UPDATE user_groups SET
        token_hash = @newTokenHash, token_ciphertext = @newTokenCiphertext,
        token_generation = token_generation + 1, version = version + 1, updated_at = @updatedAt
      WHERE token_hash = @currentTokenHash AND workspace_id = @workspaceId AND environment = @environment
      RETURNING team_id`,
    delete: `DELETE FROM user_groups
      WHERE team_id = ? AND workspace_id = ? AND environment = ? AND version = ?
      ${RETURNING_IDENTITY}`,
    insertMapping: 'INSERT INTO user_group_mappings (team_id, schema_id, data_source_id) VALUES (?, ?, ?)',
    clearMapping: 'DELETE FROM user_group_mappings WHERE team_id = ?',
  });

  db.function(CASEFOLD_FUNCTION, { deterministic: true }, (text: unknown) => (typeof text === 'string' ? casefold(text) : null));

  const findOne = (statement: Statement, ...params: unknown[]): UserGroupRecord | null => {
    const row = statement.get(...params) as SqliteUserGroupRow | undefined;
    return row ? toUserGroup(row) : null;
  };

  const byProvidedId = (tenant: Tenant, providedId: string) =>
    findOne(sql.byProvidedId, tenant.workspaceId, tenant.environment, providedId);

  /** Re-reads a row this transaction just wrote, so it is there by construction. */
  const written = (teamId: number): UserGroupRecord => {
    const group = findOne(sql.byTeamId, teamId);
    if (!group) throw new Error(`user group ${teamId} vanished inside its own transaction`);
    return group;
  };

  const insertMapping = (teamId: number, mapping: MappingEntry[]): void => {
    for (const entry of mapping) sql.insertMapping.run(teamId, entry.schemaId, entry.dataSourceId);
  };

  /** Inserts the group and its mapping; undefined (and nothing written) when its provided id exists. */
  const insertGroup = (group: NewUserGroup): GroupIdentity | undefined => {
    const { tenant } = group;
    const inserted = sql.insert.get({ ...group, ...tenant, properties: serializeProperties(group.properties) }) as
      | { team_id: number }
      | undefined;
    if (!inserted) return undefined;
    insertMapping(inserted.team_id, group.mapping);
    return { teamId: inserted.team_id, ...tenant, providedId: group.providedId };
  };

  /** Applies the patch if the row still has the expected version; undefined (and nothing written) otherwise. */
  const applyUpdate = ({ tenant, teamId, expectedVersion, patch, updatedAt }: UserGroupUpdate): GroupIdentity | undefined => {
    assertTokenPatchComplete(patch);
    const properties = patch.properties === undefined ? undefined : serializeProperties(patch.properties);
    const updated = sql.update.get({
      ...tenant,
      teamId,
      expectedVersion,
      updatedAt,
      ...patchParameters(PATCHABLE_GROUP_COLUMNS, { ...patch, properties }),
    }) as GroupIdentity | undefined;
    if (updated && patch.mapping) {
      sql.clearMapping.run(teamId);
      insertMapping(teamId, patch.mapping);
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
    return { result: { group: created, created: true }, entries: [groupEntry('user_group.created', created, context.changes)] };
  });

  const update = audit.withAudit((context: AuditContext, groupUpdate: UserGroupUpdate) => {
    const updated = applyUpdate(groupUpdate);
    if (!updated) return { result: null, entries: [] };
    const group = written(updated.teamId);
    return { result: group, entries: [groupEntry('user_group.updated', group, context.changes)] };
  });

  // The batch path of an import: prepared statements only, no re-reads, one audit entry per write.
  // Any refused write throws, which rolls the whole transaction back, audit entries included.
  const writeBatch = audit.withAudit((_context: AuditContext, writes: UserGroupWrite[]) => {
    const entries = writes.map((write): AuditEntry => {
      if (write.kind === 'create') {
        const created = insertGroup(write.group);
        if (!created) throw concurrentChange(`A user group with id ${JSON.stringify(write.group.providedId)} was created`);
        return groupEntry('user_group.created', created, write.changes);
      }
      const updated = applyUpdate(write.update);
      if (!updated) throw concurrentChange(`User group ${write.update.teamId} changed or was deleted`);
      return groupEntry('user_group.updated', updated, write.changes);
    });
    return { result: undefined, entries };
  });

  const list = (query: UserGroupQuery): UserGroupRecord[] => {
    const { search } = query;
    const searchParams =
      search === undefined
        ? { search: null, searchEnd: null, likeCanDecide: 0, namePattern: null, foldedSearch: null }
        : {
            search,
            searchEnd: prefixUpperBound(search),
            likeCanDecide: likeCanDecide(search) ? 1 : 0,
            namePattern: containsPattern(search),
            foldedSearch: casefold(search),
          };
    const rows = sql.list.all({
      ...query.tenant,
      ...searchParams,
      afterTeamId: query.afterTeamId ?? 0,
      limit: query.limit,
    }) as SqliteUserGroupRow[];
    return rows.map(toUserGroup);
  };

  const rotate = audit.withAudit((context: AuditContext, rotation: UserGroupTokenRotation) => {
    const rotated = sql.rotate.get({ ...rotation, ...rotation.tenant }) as { team_id: number } | undefined;
    if (!rotated) return { result: null, entries: [] };
    const group = written(rotated.team_id);
    return { result: group, entries: [groupEntry('user_group.token_rotated', group, context.changes)] };
  });

  const remove = audit.withAudit((context: AuditContext, tenant: Tenant, teamId: number, expectedVersion: number) => {
    const deleted = sql.delete.get(teamId, tenant.workspaceId, tenant.environment, expectedVersion) as
      | GroupIdentity
      | undefined;
    if (!deleted) return { result: false, entries: [] };
    return { result: true, entries: [groupEntry('user_group.deleted', deleted, context.changes)] };
  });

  return {
    findUserGroupByProvidedId: byProvidedId,
    findUserGroupsByProvidedIds: (tenant, providedIds) =>
      (sql.byProvidedIds.all(tenant.workspaceId, tenant.environment, JSON.stringify(providedIds)) as SqliteUserGroupRow[]).map(
        toUserGroup,
      ),
    findUserGroupByTeamId: (tenant, teamId) => findOne(sql.byTeamIdInTenant, teamId, tenant.workspaceId, tenant.environment),
    listUserGroups: list,
    writeUserGroups: (writes, context) => writeBatch(context, writes),
    findUserGroupByTokenHash: (tenant, tokenHash) =>
      findOne(sql.byTokenHash, tokenHash, tenant.workspaceId, tenant.environment),
    insertUserGroupIfAbsent: (group, context) => insertIfAbsent(context, group),
    updateUserGroup: (groupUpdate, context) => update(context, groupUpdate),
    rotateUserGroupToken: (rotation, context) => rotate(context, rotation),
    deleteUserGroup: (tenant, teamId, expectedVersion, context) => remove(context, tenant, teamId, expectedVersion),
  };
}
