import type { Database, Statement } from 'better-sqlite3';
import type { AuditContext, JsonObject, MappingEntry, NewUserGroup, UserGroupRecord } from '../../domain/models.js';
import type { Environment, Tenant } from '../../domain/tenancy.js';
import type { UserGroupStore, UserGroupTokenRotation, UserGroupUpdate } from '../store.js';
import type { AuditEntry, AuditEvents } from './audit-events.js';
import type { Synchronous } from './guard.js';
import { preparedOnFirstUse } from './prepared.js';

interface UserGroupRow {
  team_id: number;
  workspace_id: number;
  environment: Environment;
  provided_id: string;
  name: string;
  token_hash: string;
  token_ciphertext: string;
  properties: string | null;
  version: number;
  created_at: string;
  updated_at: string;
  /** JSON array of [schema_id, data_source_id] pairs, sorted by schema_id. */
  mapping: string;
}

// The mapping rides along as JSON so that every lookup is a single statement.
const SELECT_GROUP = `SELECT g.*,
  (SELECT json_group_array(json_array(m.schema_id, m.data_source_id) ORDER BY m.schema_id)
     FROM user_group_mappings m WHERE m.team_id = g.team_id) AS mapping
  FROM user_groups g`;

function toUserGroup(row: UserGroupRow): UserGroupRecord {
  const pairs = JSON.parse(row.mapping) as [number, number][];
  return {
    teamId: row.team_id,
    workspaceId: row.workspace_id,
    environment: row.environment,
    providedId: row.provided_id,
    name: row.name,
    tokenHash: row.token_hash,
    tokenCiphertext: row.token_ciphertext,
    properties: row.properties === null ? null : (JSON.parse(row.properties) as JsonObject),
    mapping: pairs.map(([schemaId, dataSourceId]) => ({ schemaId, dataSourceId })),
    version: row.version,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function serializeProperties(properties: JsonObject | null): string | null {
  return properties === null ? null : JSON.stringify(properties);
}

type GroupIdentity = Pick<UserGroupRecord, 'teamId' | 'workspaceId' | 'environment' | 'providedId'>;

function groupEntry(action: AuditEntry['action'], group: GroupIdentity, context: AuditContext): AuditEntry {
  return {
    action,
    workspaceId: group.workspaceId,
    environment: group.environment,
    teamId: group.teamId,
    providedId: group.providedId,
    changes: context.changes ?? null,
  };
}

export function userGroupMethods(db: Database, audit: AuditEvents): Synchronous<UserGroupStore> {
  const sql = preparedOnFirstUse(db, {
    byProvidedId: `${SELECT_GROUP} WHERE g.workspace_id = ? AND g.environment = ? AND g.provided_id = ?`,
    byTokenHash: `${SELECT_GROUP} WHERE g.token_hash = ? AND g.workspace_id = ? AND g.environment = ?`,
    byTeamId: `${SELECT_GROUP} WHERE g.team_id = ?`,
    insert: `INSERT INTO user_groups
      (workspace_id, environment, provided_id, name, token_hash, token_ciphertext, properties, created_at, updated_at)
      VALUES (@workspaceId, @environment, @providedId, @name, @tokenHash, @tokenCiphertext, @properties, @createdAt, @createdAt)
      ON CONFLICT (workspace_id, environment, provided_id) DO NOTHING RETURNING team_id`,
    // One statement for every patch shape: a field is written only when its flag is set.
    update: `UPDATE user_groups SET
        provided_id = CASE WHEN @setProvidedId THEN @providedId ELSE provided_id END,
        name = CASE WHEN @setName THEN @name ELSE name END,
        properties = CASE WHEN @setProperties THEN @properties ELSE properties END,
        version = version + 1,
        updated_at = @updatedAt
      WHERE team_id = @teamId AND workspace_id = @workspaceId AND environment = @environment
        AND version = @expectedVersion
      RETURNING team_id`,
    rotate: `UPDATE user_groups SET
        token_hash = @newTokenHash, token_ciphertext = @newTokenCiphertext,
        version = version + 1, updated_at = @updatedAt
      WHERE token_hash = @currentTokenHash AND workspace_id = @workspaceId AND environment = @environment
      RETURNING team_id`,
    delete: `DELETE FROM user_groups
      WHERE team_id = ? AND workspace_id = ? AND environment = ? AND version = ?
      RETURNING team_id AS teamId, workspace_id AS workspaceId, environment, provided_id AS providedId`,
    insertMapping: 'INSERT INTO user_group_mappings (team_id, schema_id, data_source_id) VALUES (?, ?, ?)',
    clearMapping: 'DELETE FROM user_group_mappings WHERE team_id = ?',
  });

  const findOne = (statement: Statement, ...params: unknown[]): UserGroupRecord | null => {
    const row = statement.get(...params) as UserGroupRow | undefined;
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

  const insertIfAbsent = audit.withAudit((context: AuditContext, group: NewUserGroup) => {
    const { tenant } = group;
    const inserted = sql.insert.get({ ...group, ...tenant, properties: serializeProperties(group.properties) }) as
      | { team_id: number }
      | undefined;
    if (!inserted) {
      const existing = byProvidedId(tenant, group.providedId);
      if (!existing) throw new Error('user group insert conflicted with a row that cannot be found');
      return { result: { group: existing, created: false }, entries: [] };
    }
    insertMapping(inserted.team_id, group.mapping);
    const created = written(inserted.team_id);
    return { result: { group: created, created: true }, entries: [groupEntry('user_group.created', created, context)] };
  });

  const update = audit.withAudit((context: AuditContext, { tenant, teamId, expectedVersion, patch, updatedAt }: UserGroupUpdate) => {
    const updated = sql.update.get({
      ...tenant,
      teamId,
      expectedVersion,
      updatedAt,
      setProvidedId: patch.providedId === undefined ? 0 : 1,
      providedId: patch.providedId ?? null,
      setName: patch.name === undefined ? 0 : 1,
      name: patch.name ?? null,
      setProperties: patch.properties === undefined ? 0 : 1,
      properties: patch.properties === undefined ? null : serializeProperties(patch.properties),
    });
    if (!updated) return { result: null, entries: [] };
    if (patch.mapping) {
      sql.clearMapping.run(teamId);
      insertMapping(teamId, patch.mapping);
    }
    const group = written(teamId);
    return { result: group, entries: [groupEntry('user_group.updated', group, context)] };
  });

  const rotate = audit.withAudit((context: AuditContext, rotation: UserGroupTokenRotation) => {
    const rotated = sql.rotate.get({ ...rotation, ...rotation.tenant }) as { team_id: number } | undefined;
    if (!rotated) return { result: null, entries: [] };
    const group = written(rotated.team_id);
    return { result: group, entries: [groupEntry('user_group.token_rotated', group, context)] };
  });

  const remove = audit.withAudit((context: AuditContext, tenant: Tenant, teamId: number, expectedVersion: number) => {
    const deleted = sql.delete.get(teamId, tenant.workspaceId, tenant.environment, expectedVersion) as
      | GroupIdentity
      | undefined;
    if (!deleted) return { result: false, entries: [] };
    return { result: true, entries: [groupEntry('user_group.deleted', deleted, context)] };
  });

  return {
    findUserGroupByProvidedId: byProvidedId,
    findUserGroupByTokenHash: (tenant, tokenHash) =>
      findOne(sql.byTokenHash, tokenHash, tenant.workspaceId, tenant.environment),
    insertUserGroupIfAbsent: (group, context) => insertIfAbsent(context, group),
    updateUserGroup: (groupUpdate, context) => update(context, groupUpdate),
    rotateUserGroupToken: (rotation, context) => rotate(context, rotation),
    deleteUserGroup: (tenant, teamId, expectedVersion, context) => remove(context, tenant, teamId, expectedVersion),
  };
}
