import type { AuditContext, MappingEntry, NewUserGroup, UserGroupRecord } from '../../domain/models.js';
import type { Tenant } from '../../domain/tenancy.js';
import { groupEntry } from '../audit-entries.js';
import type { AuditEntry } from '../audit-entries.js';
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
import { auditEventPerRow, auditParameters, type AuditEvents } from './audit-events.js';
import { unavailable } from '../../domain/errors.js';
import { LOST, retryWhileContended } from '../../domain/retry-policy.js';
import { isTransientConflict } from './postgres-errors.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';
import { iso, toNumber } from './rows.js';
import type { Int8 } from './rows.js';
import { statements } from './statements.js';
import type { Statement } from './statements.js';

/** user_groups as node-postgres returns it: bigints as strings, timestamps as Dates, JSON parsed. */
type PostgresUserGroupRow = Omit<UserGroupRow, 'team_id' | 'workspace_id' | 'token_generation' | 'created_at' | 'updated_at'> & {
  team_id: Int8;
  workspace_id: Int8;
  token_generation: Int8;
  created_at: Date;
  updated_at: Date;
};

function toUserGroup(row: PostgresUserGroupRow): UserGroupRecord {
  return userGroupFromRow({
    ...row,
    team_id: toNumber(row.team_id),
    workspace_id: toNumber(row.workspace_id),
    token_generation: toNumber(row.token_generation),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  });
}

const GROUP_COLUMNS = `team_id, workspace_id, environment, provided_id, name, token_hash, token_ciphertext, properties,
  version, token_generation, created_at, updated_at`;

const mappingOf = (table: string) => `COALESCE((SELECT json_agg(json_build_array(m.schema_id, m.data_source_id))
  FROM user_group_mappings m WHERE m.team_id = ${table}.team_id), '[]') AS mapping`;

// The mapping rides along as JSON so that every lookup is a single statement.
const SELECT_GROUP = `SELECT ${GROUP_COLUMNS.replace(/(\w+)/g, 'g.$1')}, ${mappingOf('g')} FROM user_groups g`;

/** Writes return the row they wrote, which saves a round trip to read it back. */
const RETURNING_GROUP = `RETURNING ${GROUP_COLUMNS}, ${mappingOf('user_groups')}`;

const RETURNING_IDENTITY = 'RETURNING team_id, workspace_id, environment, provided_id';

/** Inserts a group and its mapping unless its provided id exists: the CTEs `inserted` and `mapped`. */
const INSERT_GROUP = `WITH inserted AS (
    INSERT INTO user_groups
      (workspace_id, environment, provided_id, name, token_hash, token_ciphertext, properties, created_at, updated_at)
    VALUES (@workspaceId, @environment, @providedId, @name, @tokenHash, @tokenCiphertext, @properties::json,
      @createdAt, @createdAt)
    ON CONFLICT (workspace_id, environment, provided_id) DO NOTHING
    RETURNING ${GROUP_COLUMNS}
  ), mapped AS (
    INSERT INTO user_group_mappings (team_id, schema_id, data_source_id)
    SELECT inserted.team_id, m.schema_id, m.data_source_id
    FROM inserted CROSS JOIN unnest(@schemaIds::bigint[], @dataSourceIds::bigint[]) AS m(schema_id, data_source_id)
  )`;

const TENANT = 'g.workspace_id = @workspaceId AND g.environment = @environment';

const sql = statements({
  byProvidedId: `${SELECT_GROUP} WHERE ${TENANT} AND g.provided_id = @providedId`,
  byTokenHash: `${SELECT_GROUP} WHERE g.token_hash = @tokenHash AND ${TENANT}`,
  byTeamIdInTenant: `${SELECT_GROUP} WHERE g.team_id = @teamId AND ${TENANT}`,
  // An array parameter keeps one statement for any number of ids.
  byProvidedIds: `${SELECT_GROUP} WHERE ${TENANT} AND g.provided_id = ANY(@providedIds::text[]) ORDER BY g.team_id`,
  // Walks the tenant in team_id order (index user_groups_tenant) and stops at the limit. The name
  // substring test makes any search a scan of the tenant; the provided-id prefix is a range because
  // that is exact for every string under the column's "C" collation. strpos() takes the search text
  // literally, so %, _ and backslash need no escaping; lower() folds case beyond ASCII on a database
  // with a UTF-8 locale.
  list: `${SELECT_GROUP}
    WHERE ${TENANT} AND g.team_id > @afterTeamId
      AND (@search::text IS NULL
        OR (g.provided_id >= @search AND (@searchEnd::text IS NULL OR g.provided_id < @searchEnd))
        OR strpos(lower(g.name), lower(@search)) > 0)
    ORDER BY g.team_id LIMIT @limit`,
  // The group and its mapping in one statement. ON CONFLICT DO NOTHING waits for a concurrent insert
  // of the same provided id to finish, then returns no row if it committed: exactly one caller creates.
  insert: `${INSERT_GROUP} SELECT ${GROUP_COLUMNS} FROM inserted`,
  // The same, with its audit event: one statement is one transaction, with no BEGIN and COMMIT round trips.
  insertAudited: `${INSERT_GROUP}, ${auditEventPerRow('inserted', 'user_group.created')} SELECT ${GROUP_COLUMNS} FROM inserted`,
  // One statement for every patch shape: a field is written only when its flag is set.
  update: `UPDATE user_groups SET
      provided_id = CASE WHEN @setProvidedId::boolean THEN @providedId::text ELSE provided_id END,
      name = CASE WHEN @setName::boolean THEN @name::text ELSE name END,
      properties = CASE WHEN @setProperties::boolean THEN @properties::json ELSE properties END,
      token_hash = CASE WHEN @setTokenHash::boolean THEN @tokenHash::text ELSE token_hash END,
      token_ciphertext = CASE WHEN @setTokenCiphertext::boolean THEN @tokenCiphertext::text ELSE token_ciphertext END,
      token_generation = token_generation + CASE WHEN @setTokenHash::boolean THEN 1 ELSE 0 END,
      version = version + 1,
      updated_at = @updatedAt
    WHERE team_id = @teamId AND workspace_id = @workspaceId AND environment = @environment
      AND version = @expectedVersion
    ${RETURNING_GROUP}`,
  // A concurrent rotation of the same token holds the row until it commits; this one then re-checks
  // the WHERE clause against the committed row, finds the old hash gone, and changes nothing.
  // Rotation and deletion write their audit event in the same statement, like a create.
  rotate: `WITH rotated AS (
      UPDATE user_groups SET
        token_hash = @newTokenHash, token_ciphertext = @newTokenCiphertext,
        token_generation = token_generation + 1, version = version + 1, updated_at = @updatedAt
      WHERE token_hash = @currentTokenHash AND workspace_id = @workspaceId AND environment = @environment
      ${RETURNING_GROUP}
    ), ${auditEventPerRow('rotated', 'user_group.token_rotated')}
    SELECT ${GROUP_COLUMNS}, mapping FROM rotated`,
  delete: `WITH deleted AS (
      DELETE FROM user_groups
      WHERE team_id = @teamId AND workspace_id = @workspaceId AND environment = @environment AND version = @expectedVersion
      ${RETURNING_IDENTITY}
    ), ${auditEventPerRow('deleted', 'user_group.deleted')}
    SELECT team_id, workspace_id, environment, provided_id FROM deleted`,
  clearMapping: 'DELETE FROM user_group_mappings WHERE team_id = @teamId',
  insertMapping: `INSERT INTO user_group_mappings (team_id, schema_id, data_source_id)
    SELECT @teamId::bigint, m.schema_id, m.data_source_id
    FROM unnest(@schemaIds::bigint[], @dataSourceIds::bigint[]) AS m(schema_id, data_source_id)`,
}, { prepared: true });

/** A mapping as the two parallel arrays the statements unnest. */
function mappingParameters(mapping: MappingEntry[]): { schemaIds: number[]; dataSourceIds: number[] } {
  return { schemaIds: mapping.map((entry) => entry.schemaId), dataSourceIds: mapping.map((entry) => entry.dataSourceId) };
}

export function userGroupMethods(db: PostgresDatabase, audit: AuditEvents): UserGroupStore {
  const findOne = async (q: Queryable, statement: Statement): Promise<UserGroupRecord | null> => {
    const [row] = await q.rows<PostgresUserGroupRow>(statement);
    return row ? toUserGroup(row) : null;
  };

  const findMany = async (q: Queryable, statement: Statement): Promise<UserGroupRecord[]> =>
    (await q.rows<PostgresUserGroupRow>(statement)).map(toUserGroup);

  const byProvidedId = (q: Queryable, tenant: Tenant, providedId: string) => findOne(q, sql.byProvidedId({ ...tenant, providedId }));

  /** Inserts the group and its mapping; undefined (and nothing written) when its provided id exists. */
  const insertGroup = async (
    q: Queryable,
    group: NewUserGroup,
    audited?: AuditContext,
  ): Promise<UserGroupRecord | undefined> => {
    const { tenant, providedId, name, tokenHash, tokenCiphertext, createdAt } = group;
    const parameters = {
      ...tenant,
      providedId,
      name,
      tokenHash,
      tokenCiphertext,
      properties: serializeProperties(group.properties),
      createdAt,
      ...mappingParameters(group.mapping),
    };
    const [inserted] = await q.rows<Omit<PostgresUserGroupRow, 'mapping'>>(
      audited ? sql.insertAudited({ ...parameters, ...auditParameters(audited) }) : sql.insert(parameters),
    );
    // The statement's RETURNING cannot see the mapping rows its sibling CTE inserts; they are the input.
    return inserted && toUserGroup({ ...inserted, mapping: group.mapping.map((entry) => [entry.schemaId, entry.dataSourceId]) });
  };

  /** Applies the patch if the row still has the expected version; undefined (and nothing written) otherwise. */
  const applyUpdate = async (
    tx: Queryable,
    { tenant, teamId, expectedVersion, patch, updatedAt }: UserGroupUpdate,
  ): Promise<UserGroupRecord | undefined> => {
    assertTokenPatchComplete(patch);
    const properties = patch.properties === undefined ? undefined : serializeProperties(patch.properties);
    const [updated] = await tx.rows<PostgresUserGroupRow>(
      sql.update({
        ...tenant,
        teamId,
        expectedVersion,
        updatedAt,
        ...patchParameters(PATCHABLE_GROUP_COLUMNS, { ...patch, properties }),
      }),
    );
    if (!updated) return undefined;
    if (!patch.mapping) return toUserGroup(updated);
    await tx.rows(sql.clearMapping({ teamId }));
    await tx.rows(sql.insertMapping({ teamId, ...mappingParameters(patch.mapping) }));
    // RETURNING showed the mapping as it was before this statement; the new one is the patch's.
    return toUserGroup({ ...updated, mapping: patch.mapping.map((entry) => [entry.schemaId, entry.dataSourceId]) });
  };

  // The hot write: group, mapping and audit event in one statement (atomic by itself), so a create
  // costs one round trip instead of BEGIN, insert, audit and COMMIT.
  // It tries again (under the one retry policy) when its insert lost a deadlock, or met a group that
  // is gone by the time it reads it (deleted in between): each try is a fresh statement snapshot.
  const insertIfAbsent = (group: NewUserGroup, context: AuditContext) => {
    let conflict: unknown = unavailable(new Error('user group insert kept conflicting with a row deleted before it could be read'));
    return retryWhileContended(async () => {
      let created: UserGroupRecord | undefined;
      try {
        created = await insertGroup(db, group, context);
      } catch (error) {
        if (!isTransientConflict(error)) throw error;
        conflict = error;
        return LOST;
      }
      if (created) return { group: created, created: true };
      // The conflicting insert has committed by now (ON CONFLICT waited for it), and this read is a new
      // statement with a new snapshot.
      const existing = await byProvidedId(db, group.tenant, group.providedId);
      return existing ? { group: existing, created: false } : LOST;
    }, () => conflict as Error);
  };

  const update = audit.withAudit(async (tx, context: AuditContext, groupUpdate: UserGroupUpdate) => {
    const group = await applyUpdate(tx, groupUpdate);
    if (!group) return { result: null, entries: [] };
    return { result: group, entries: [groupEntry('user_group.updated', group, context.changes)] };
  });

  // The batch path of an import: no re-reads, one audit entry per write. Any refused write throws,
  // which rolls the whole transaction back, audit entries included.
  const writeBatch = audit.withAudit(async (tx, _context: AuditContext, writes: UserGroupWrite[]) => {
    const entries: AuditEntry[] = [];
    for (const write of writes) {
      if (write.kind === 'create') {
        const created = await insertGroup(tx, write.group);
        if (!created) throw concurrentChange(`A user group with id ${JSON.stringify(write.group.providedId)} was created`);
        entries.push(groupEntry('user_group.created', created, write.changes));
      } else {
        const updated = await applyUpdate(tx, write.update);
        if (!updated) throw concurrentChange(`User group ${write.update.teamId} changed or was deleted`);
        entries.push(groupEntry('user_group.updated', updated, write.changes));
      }
    }
    return { result: undefined, entries };
  });

  const list = (query: UserGroupQuery): Promise<UserGroupRecord[]> => {
    const { search } = query;
    return findMany(
      db,
      sql.list({
        ...query.tenant,
        search: search ?? null,
        searchEnd: search === undefined ? null : prefixUpperBound(search),
        afterTeamId: query.afterTeamId ?? 0,
        limit: query.limit,
      }),
    );
  };

  const rotate = async (rotation: UserGroupTokenRotation, context: AuditContext): Promise<UserGroupRecord | null> => {
    const { tenant, currentTokenHash, newTokenHash, newTokenCiphertext, updatedAt } = rotation;
    const [rotated] = await db.rows<PostgresUserGroupRow>(
      sql.rotate({ ...tenant, currentTokenHash, newTokenHash, newTokenCiphertext, updatedAt, ...auditParameters(context) }),
    );
    return rotated ? toUserGroup(rotated) : null;
  };

  const remove = async (tenant: Tenant, teamId: number, expectedVersion: number, context: AuditContext): Promise<boolean> =>
    (await db.rows(sql.delete({ ...tenant, teamId, expectedVersion, ...auditParameters(context) }))).length > 0;

  return {
    findUserGroupByProvidedId: (tenant, providedId) => byProvidedId(db, tenant, providedId),
    findUserGroupsByProvidedIds: (tenant, providedIds) => findMany(db, sql.byProvidedIds({ ...tenant, providedIds })),
    findUserGroupByTeamId: (tenant, teamId) => findOne(db, sql.byTeamIdInTenant({ ...tenant, teamId })),
    listUserGroups: list,
    writeUserGroups: (writes, context) => writeBatch(context, writes),
    findUserGroupByTokenHash: (tenant, tokenHash) => findOne(db, sql.byTokenHash({ ...tenant, tokenHash })),
    insertUserGroupIfAbsent: insertIfAbsent,
    updateUserGroup: (groupUpdate, context) => update(context, groupUpdate),
    rotateUserGroupToken: rotate,
    deleteUserGroup: remove,
  };
}
