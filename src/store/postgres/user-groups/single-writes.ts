import type { AuditContext } from '../../../domain/audit/audit.records.js';
import type { NewUserGroup, UserGroupRecord } from '../../../domain/user-groups/user-group.records.js';
import type { Tenant } from '../../../domain/tenancy.js';
import { groupAudit, groupEntry } from '../../../domain/user-groups/user-groups.rules.js';
import type {
  UserGroupDeletion,
  UserGroupStore,
  UserGroupTokenRotation,
  UserGroupUpdate,
} from '../../../domain/user-groups/user-groups.port.js';
import { assertTokenPatchComplete } from '../../../domain/user-groups/user-group-patch.rules.js';
import { deletionRefusal } from '../../../domain/user-groups/user-group-deletion.rules.js';
import { auditEventPerRow, auditParameters, NO_ENDPOINT_WANTS, type AuditEvents } from '../audit-events.js';
import { failure } from '../../../domain/errors.js';
import { LOST_TO_CONCURRENT_CHANGE, retryWhileContended } from '../../../domain/retry-policy.js';
import { isParentLinkViolation, isTransientConflict } from '../postgres-errors.js';
import type { PostgresDatabase } from '../postgres-database.js';
import { toNumber } from '../rows.js';
import type { Int8 } from '../rows.js';
import { statements } from '../statements.js';
import {
  decodeUserGroupRow,
  decodedJsonRow,
  RETURNING_GROUP,
  GROUP_COLUMNS,
  groupColumns,
  mappingOf,
  ancestorsOf,
  findOne,
  type PostgresUserGroupRow,
} from './columns.js';
import { byProvidedId } from './reads.js';
import { insertGroup, updateParameters, applyUpdate, touchesNoTree, writeSql } from './group-writes.js';
import { written } from './statement-or-transaction.js';
import { turnBatches } from './turn-batches.js';
import { GROUP_COLUMN } from '../../user-group-columns.js';

// The tenant compared with IS NOT DISTINCT FROM (NOT NULL columns: the same as =), which no index
// serves, so the planner takes the unique token hash whatever the statistics; with `=` a table never
// analysed was read through the tenant index, every group of the tenant (docs/performance.md,
// "What else a fresh database cost: the writes").
const ROTATE = `UPDATE user_groups SET
      token_hash = @newTokenHash, ${GROUP_COLUMN.tokenCiphertext} = @newTokenCiphertext,
      ${GROUP_COLUMN.tokenGeneration} = ${GROUP_COLUMN.tokenGeneration} + 1, version = version + 1, updated_at = @updatedAt
    WHERE token_hash = @currentTokenHash
      AND (workspace_id, environment) IS NOT DISTINCT FROM (@workspaceId::bigint, @environment::text)`;

/** The group to delete and its children, counted in the same statement; the CTE `target`. */
const DELETE_TARGET = `WITH target AS (
      SELECT t.team_id, (SELECT count(*) FROM user_groups c WHERE c.parent_team_id = t.team_id) AS children
      FROM user_groups t
      WHERE t.team_id = @teamId AND t.workspace_id = @workspaceId AND t.environment = @environment AND t.version = @expectedVersion
    )`;

/** A rotation and a deletion, as one statement with its audit event or plain in a transaction. */
export const singleSql = statements(
  {
    rotateIfNoEndpointWants: `WITH rotated AS (${ROTATE} AND ${NO_ENDPOINT_WANTS} ${RETURNING_GROUP}),
    ${auditEventPerRow('rotated')}
    SELECT ${GROUP_COLUMNS}, mapping, ancestors FROM rotated`,
    deleteIfNoEndpointWants: `${DELETE_TARGET}, deleted AS (
      DELETE FROM user_groups g USING target
      WHERE g.team_id = target.team_id AND target.children = 0 AND g.version = @expectedVersion
        AND ${NO_ENDPOINT_WANTS}
      RETURNING g.team_id, g.workspace_id, g.environment, g.provided_id
    ), ${auditEventPerRow('deleted')}
    SELECT target.children, EXISTS (SELECT 1 FROM deleted) AS deleted FROM target`,
    // A concurrent rotation of the same token holds the row until it commits; this one then re-checks
    // the WHERE clause against the committed row, finds the old hash gone, and changes nothing.
    rotate: `${ROTATE} ${RETURNING_GROUP}`,
    // The children are counted in the same statement; a child linked by a transaction still open then
    // makes the foreign key refuse the delete once it commits, which the caller treats as "moved on".
    // RETURNING reads mapping and ancestors in the statement's snapshot, so the group comes back whole,
    // as it was: its webhook event shows it.
    delete: `${DELETE_TARGET}, deleted AS (
      DELETE FROM user_groups g USING target
      WHERE g.team_id = target.team_id AND target.children = 0 AND g.version = @expectedVersion
      RETURNING ${groupColumns('g')}, ${mappingOf('g')}, ${ancestorsOf('g')}
    )
    SELECT target.children, (SELECT row_to_json(deleted) FROM deleted) AS deleted FROM target`,
  },
  { prepared: true },
);

/**
 * The writes of one group a request asks for (create, update, token rotation, deletion), each as one
 * statement or as a transaction (statement-or-transaction.ts); creates of roots and rotations of one
 * turn go as one statement (turn-batches.ts).
 */
export function singleWrites(
  db: PostgresDatabase,
  audit: AuditEvents,
): Pick<UserGroupStore, 'insertUserGroupIfAbsent' | 'updateUserGroup' | 'rotateUserGroupToken' | 'deleteUserGroup'> {
  const { createInTurn, rotateInTurn } = turnBatches(db, {
    alone: (rotation, context) => rotate(rotation, context),
    announced: (context, rotation) => rotateAnnounced(context, rotation),
  });

  const insertAudited = audit.withAudit(async (tx, context: AuditContext, group: NewUserGroup) => {
    const created = await insertGroup(tx, group);
    return {
      result: created,
      entries: created ? [groupEntry(groupAudit('user_group.created', context.changes), created)] : [],
    };
  });

  // A root (the hot path) may be one statement, which writes nothing when the group exists; a group
  // with a parent is checked under its tree's lock, in the transaction. A root whose team_id an import
  // asks to keep is its own statement (TEAM_ID); other roots of one turn share one (docs/adr/0019-postgresql-group-writes.md).
  const create = written<[NewUserGroup, AuditContext], UserGroupRecord | undefined>({
    statement: async (group, context) =>
      group.parentProvidedId !== null
        ? undefined
        : group.teamId === undefined
          ? (await createInTurn({ group, context })).outcome
          : insertGroup(db, group, context),
    transaction: (group, context) => insertAudited(context, group),
  });

  // It tries again (under the one retry policy) when its insert lost a deadlock, or met a group that
  // is gone by the time it reads it (deleted in between): each try is a fresh statement snapshot.
  const insertIfAbsent = (group: NewUserGroup, context: AuditContext) => {
    // Made only when the retries give up: an Error's stack costs every create otherwise.
    let conflict: unknown;
    return retryWhileContended(
      async () => {
        let created: UserGroupRecord | undefined;
        try {
          created = await create(group, context);
        } catch (error) {
          if (!isTransientConflict(error)) throw error;
          conflict = error;
          return LOST_TO_CONCURRENT_CHANGE;
        }
        if (created) return { group: created, created: true };
        // The conflicting insert has committed by now (ON CONFLICT waited for it), and this read is a new
        // statement with a new snapshot.
        const existing = await byProvidedId(db, group.tenant, group.providedId);
        return existing ? { group: existing, created: false } : LOST_TO_CONCURRENT_CHANGE;
      },
      () =>
        (conflict as Error | undefined) ??
        failure.unavailable(new Error('user group insert kept conflicting with a row deleted before it could be read')),
    );
  };

  const updateAudited = audit.withAudit(async (tx, context: AuditContext, groupUpdate: UserGroupUpdate) => {
    const applied = await applyUpdate(tx, groupUpdate, context);
    if (!applied) return { result: null, entries: [] };
    const { group, audited } = applied;
    return {
      result: group,
      entries: audited ? [] : [groupEntry(groupAudit('user_group.updated', context.changes), group)],
    };
  });

  // An update that touches no tree (a rename, tags, a token swap…) is one statement, no transaction;
  // the rest, and any update an endpoint wants the event of, is the transaction (docs/adr/0019-postgresql-group-writes.md). A statement
  // that found another version wrote nothing either: the transaction then finds the same and answers
  // null, a lost race.
  const update = written<[AuditContext, UserGroupUpdate], UserGroupRecord | null>({
    statement: async (context, groupUpdate) => {
      if (!touchesNoTree(groupUpdate)) return undefined;
      assertTokenPatchComplete(groupUpdate.patch);
      const group = await findOne(
        db,
        writeSql.updateIfNoEndpointWants({
          ...updateParameters(groupUpdate, undefined),
          ...auditParameters(context, groupAudit('user_group.updated', context.changes)),
        }),
      );
      return group ?? undefined;
    },
    transaction: updateAudited,
  });

  const rotationParameters = ({
    tenant,
    currentTokenHash,
    newTokenHash,
    newTokenCiphertext,
    updatedAt,
  }: UserGroupTokenRotation) => ({
    ...tenant,
    currentTokenHash,
    newTokenHash,
    newTokenCiphertext,
    updatedAt,
  });

  const rotateAnnounced = audit.withAudit(async (tx, context: AuditContext, rotation: UserGroupTokenRotation) => {
    const group = await findOne(tx, singleSql.rotate(rotationParameters(rotation)));
    return {
      result: group,
      entries: group ? [groupEntry(groupAudit('user_group.token_rotated', context.changes), group)] : [],
    };
  });

  // The transaction also answers an unknown token (null).
  const rotate = written<[UserGroupTokenRotation, AuditContext], UserGroupRecord | null>({
    statement: async (rotation, context) =>
      (await findOne(
        db,
        singleSql.rotateIfNoEndpointWants({
          ...rotationParameters(rotation),
          ...auditParameters(context, groupAudit('user_group.token_rotated', context.changes)),
        }),
      )) ?? undefined,
    transaction: (rotation, context) => rotateAnnounced(context, rotation),
  });

  const deleteAudited = audit.withAudit(
    async (tx, context: AuditContext, tenant: Tenant, teamId: number, expectedVersion: number) => {
      const [outcome] = await tx.rows<{ children: Int8; deleted: PostgresUserGroupRow | null }>(
        singleSql.delete({ ...tenant, teamId, expectedVersion }),
      );
      const refusal = deletionRefusal(outcome ? toNumber(outcome.children) : 0);
      if (refusal) return { result: refusal, entries: [] };
      if (!outcome?.deleted) return { result: { status: 'moved' } as UserGroupDeletion, entries: [] };
      const group = decodeUserGroupRow(decodedJsonRow(outcome.deleted));
      return {
        result: { status: 'deleted' } as UserGroupDeletion,
        entries: [groupEntry(groupAudit('user_group.deleted', context.changes), group)],
      };
    },
  );

  const deletion = written<[Tenant, number, number, AuditContext], UserGroupDeletion>({
    // Answers a refusal (children, another version) itself; a deletion an endpoint wants goes on.
    statement: async (tenant, teamId, expectedVersion, context) => {
      const [outcome] = await db.rows<{ children: Int8; deleted: boolean }>(
        singleSql.deleteIfNoEndpointWants({
          ...tenant,
          teamId,
          expectedVersion,
          ...auditParameters(context, groupAudit('user_group.deleted', context.changes)),
        }),
      );
      if (!outcome) return { status: 'moved' };
      const refusal = deletionRefusal(toNumber(outcome.children));
      if (refusal) return refusal;
      return outcome.deleted ? { status: 'deleted' } : undefined;
    },
    transaction: (tenant, teamId, expectedVersion, context) => deleteAudited(context, tenant, teamId, expectedVersion),
  });

  const remove = async (
    tenant: Tenant,
    teamId: number,
    expectedVersion: number,
    context: AuditContext,
  ): Promise<UserGroupDeletion> => {
    try {
      return await deletion(tenant, teamId, expectedVersion, context);
    } catch (error) {
      // A child was linked while this statement ran: the next read counts it.
      if (isParentLinkViolation(error)) return { status: 'moved' };
      throw error;
    }
  };
  return {
    insertUserGroupIfAbsent: insertIfAbsent,
    // A lost race (null): the service reads and decides again.
    updateUserGroup: (groupUpdate, context) =>
      update(context, groupUpdate).catch((error: unknown) =>
        isTransientConflict(error) ? null : Promise.reject(error),
      ),
    rotateUserGroupToken: async (rotation, context) => (await rotateInTurn({ rotation, context })).outcome,
    deleteUserGroup: remove,
  };
}
