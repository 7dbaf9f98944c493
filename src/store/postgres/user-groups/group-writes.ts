import type { AuditContext } from '../../../domain/audit/audit.records.js';
import type { NewUserGroup, UserGroupRecord } from '../../../domain/user-groups/user-group.records.js';
import { groupAudit } from '../../../domain/user-groups/user-groups.rules.js';
import type { UserGroupUpdate } from '../../../domain/user-groups/user-groups.port.js';
import {
  INSERT_COLUMNS,
  insertParameters,
  insertValues,
  patchAssignments,
  groupPatchParameters,
} from '../../user-group-columns.js';
import {
  assertTokenPatchComplete,
  mergedSizeWriteOfUpdate,
} from '../../../domain/user-groups/user-group-patch.rules.js';
import { auditEventPerRow, auditParameters, NO_ENDPOINT_WANTS } from '../audit-events.js';
import type { Queryable } from '../postgres-database.js';
import { statements } from '../statements.js';
import { IN_TEAM_ID_GAP } from '../../team-id-gaps.js';
import {
  decodeUserGroupRow,
  RETURNING_GROUP,
  GROUP_COLUMNS,
  mappingRowIds,
  mappingParameters,
  mappingRows,
  findOne,
  type PostgresUserGroupRow,
  type PostgresUserGroupColumns,
} from './columns.js';
import { byProvidedId, readSql } from './reads.js';
import { parentTeamIdFor, assertMergedSize } from './trees.js';

/**
 * The new group's team_id: a requested one (an import's) that was never issued, above the sequence's
 * mark or in a gap the mark jumped over (team-ids.rules.ts), is kept; otherwise the next from the
 * sequence. Writes that may keep one lock the table first, so no create draws a number between this
 * check and the sequence's catching up.
 */
const TEAM_ID = `CASE WHEN @teamId::bigint IS NULL THEN nextval('user_groups_team_id_seq')
    WHEN @teamId::bigint > (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM user_groups_team_id_seq)
    OR ${IN_TEAM_ID_GAP.replaceAll('@teamId', '@teamId::bigint')}
    THEN @teamId::bigint ELSE nextval('user_groups_team_id_seq') END`;

/**
 * Inserts a group and its mapping unless its provided id exists (or `condition` is false): the CTEs
 * `inserted` and `mapped`.
 */
const insertGroupSql = (condition = 'true') => `WITH inserted AS (
    INSERT INTO user_groups (${INSERT_COLUMNS})
    OVERRIDING SYSTEM VALUE
    SELECT ${insertValues('postgres', TEAM_ID)}
    WHERE ${condition}
    ON CONFLICT (workspace_id, environment, provided_id) DO NOTHING
    RETURNING ${GROUP_COLUMNS}
  ), mapped AS (
    INSERT INTO user_group_mappings (team_id, schema_id, data_source_id, schema_number, data_source_number)
    SELECT inserted.team_id, ${mappingRowIds('inserted.workspace_id')}, m.schema_id, m.data_source_id
    FROM inserted CROSS JOIN unnest(@schemaIds::bigint[], @dataSourceIds::bigint[]) AS m(schema_id, data_source_id)
  )`;

/** A patch applied if the row is still the version read; every patch shape is this one statement. */
const UPDATE_GROUP = `UPDATE user_groups SET
      ${patchAssignments('postgres')}
    WHERE team_id = @teamId AND workspace_id = @workspaceId AND environment = @environment
      AND version = @expectedVersion`;

/** The insert and the patch of one group, shared by every kind of write. */
export const writeSql = statements(
  {
    // The group and its mapping in one statement. ON CONFLICT DO NOTHING waits for a concurrent insert
    // of the same provided id to finish, then returns no row if it committed: exactly one caller creates.
    insert: `${insertGroupSql()} SELECT ${GROUP_COLUMNS} FROM inserted`,
    // The fast path of the hot write: group, mapping and audit event in one statement (atomic by
    // itself, no BEGIN and COMMIT round trips), taken only while no endpoint wants the event, which has
    // to be written with the whole group (a transaction: the paths below). Rotation and deletion have
    // theirs too.
    insertIfNoEndpointWants: `${insertGroupSql(NO_ENDPOINT_WANTS)}, ${auditEventPerRow('inserted')}
    SELECT ${GROUP_COLUMNS} FROM inserted`,
    // One statement for every patch shape: a field is written only when its flag is set.
    update: `${UPDATE_GROUP} ${RETURNING_GROUP}`,
    // The same with its audit event, as one statement (docs/adr/0019-postgresql-group-writes.md): a change that touches no tree and
    // sets no mapping needs no transaction at all, and one that does saves the audit round trip.
    // Taken only while no endpoint wants the event (its webhook event is written with the whole group).
    updateIfNoEndpointWants: `WITH updated AS (${UPDATE_GROUP} AND ${NO_ENDPOINT_WANTS} ${RETURNING_GROUP}),
    ${auditEventPerRow('updated')}
    SELECT ${GROUP_COLUMNS}, mapping, ancestors FROM updated`,
    // The mapping rows of one group or of many (a sync's run): one row per (team id, schema, data source).
    insertMappings: `INSERT INTO user_group_mappings (team_id, schema_id, data_source_id, schema_number, data_source_number)
    SELECT m.team_id, ${mappingRowIds('@workspaceId::bigint')}, m.schema_id, m.data_source_id
    FROM unnest(@teamIds::bigint[], @schemaIds::bigint[], @dataSourceIds::bigint[]) AS m(team_id, schema_id, data_source_id)`,
    clearMappings: 'DELETE FROM user_group_mappings WHERE team_id = ANY(@teamIds::bigint[])',
  },
  { prepared: true },
);

/**
 * Inserts the group and its mapping; undefined (and nothing written) when its provided id exists.
 * A group with a parent goes through `tx`, a transaction the caller opened: the parent is checked
 * under the tree lock first, and the new row (with its ancestors) is read back.
 */
export const insertGroup = async (
  q: Queryable,
  group: NewUserGroup,
  unannounced?: AuditContext,
): Promise<UserGroupRecord | undefined> => {
  const { tenant, providedId, parentProvidedId } = group;
  // The parent is checked only for a group that will be created; one that exists is left as it is.
  if (parentProvidedId !== null && (await byProvidedId(q, tenant, providedId))) return undefined;
  const parentTeamId = (await parentTeamIdFor(q, tenant, parentProvidedId)) ?? null;
  if (parentTeamId !== null)
    await assertMergedSize(
      q,
      tenant,
      { providedId, properties: group.properties, accessRules: group.accessRules.length, parentTeamId },
      true,
    );
  const parameters = { ...insertParameters('postgres', group, parentTeamId), ...mappingParameters(group.mapping) };
  const [inserted] = await q.rows<PostgresUserGroupColumns>(
    unannounced
      ? writeSql.insertIfNoEndpointWants({
          ...parameters,
          ...auditParameters(unannounced, groupAudit('user_group.created', unannounced.changes)),
        })
      : writeSql.insert(parameters),
  );
  if (inserted && parentProvidedId !== null)
    return (await findOne(q, readSql.byTeamIdInTenant({ ...tenant, teamId: inserted.team_id }))) ?? undefined;
  // The statement's RETURNING cannot see the mapping rows its sibling CTE inserts; they are the input.
  return (
    inserted &&
    decodeUserGroupRow({ ...inserted, mapping: group.mapping.map((entry) => [entry.schemaId, entry.dataSourceId]) })
  );
};

/** The patch's columns as the update statements take them. */
export const updateParameters = (
  { tenant, teamId, expectedVersion, patch, updatedAt }: UserGroupUpdate,
  parentTeamId: number | null | undefined,
) => ({
  ...tenant,
  teamId,
  expectedVersion,
  updatedAt,
  ...groupPatchParameters('postgres', { ...patch, parentTeamId }),
});

/**
 * Applies the patch if the row still has the expected version; undefined (and nothing written)
 * otherwise. Given `unannounced` (the audit context of a single update), the change and its audit
 * event are one statement while no endpoint wants the event (`audited`: the caller writes no entry);
 * when one does, the plain update follows, in the same transaction, and the caller writes the entry.
 */
export const applyUpdate = async (
  tx: Queryable,
  groupUpdate: UserGroupUpdate,
  unannounced?: AuditContext,
): Promise<{ group: UserGroupRecord; audited: boolean } | undefined> => {
  const { tenant, teamId, patch } = groupUpdate;
  assertTokenPatchComplete(patch);
  const parentTeamId = await parentTeamIdFor(tx, tenant, patch.parentProvidedId, teamId);
  const sizeCheck = mergedSizeWriteOfUpdate(teamId, patch, parentTeamId);
  // parentTeamIdFor locked the trees when the patch changes the link.
  if (sizeCheck) await assertMergedSize(tx, tenant, sizeCheck, parentTeamId !== undefined);
  const parameters = updateParameters(groupUpdate, parentTeamId);
  // A mapping is rewritten after the row, and only the plain update leaves room for that.
  if (unannounced && !patch.mapping) {
    const group = await findOne(
      tx,
      writeSql.updateIfNoEndpointWants({
        ...parameters,
        ...auditParameters(unannounced, groupAudit('user_group.updated', unannounced.changes)),
      }),
    );
    if (group) return { group, audited: true };
  }
  const [updated] = await tx.rows<PostgresUserGroupRow>(writeSql.update(parameters));
  if (!updated) return undefined;
  if (!patch.mapping) return { group: decodeUserGroupRow(updated), audited: false };
  await tx.rows(writeSql.clearMappings({ teamIds: [teamId] }));
  const { keys: teamIds, ...mapped } = mappingRows([{ key: teamId, mapping: patch.mapping }]);
  await tx.rows(writeSql.insertMappings({ workspaceId: tenant.workspaceId, teamIds, ...mapped }));
  // RETURNING showed the mapping as it was before this statement; the new one is the patch's.
  const mapping = patch.mapping.map((entry): [number, number] => [entry.schemaId, entry.dataSourceId]);
  return { group: decodeUserGroupRow({ ...updated, mapping }), audited: false };
};

/** Whether an update reads and locks nothing before its write: no link, no mapping, nothing merged grows. */
export const touchesNoTree = ({ teamId, patch }: UserGroupUpdate) =>
  patch.parentProvidedId === undefined &&
  patch.mapping === undefined &&
  mergedSizeWriteOfUpdate(teamId, patch, undefined) === undefined;
