import type { AuditContext } from '../../../domain/audit/audit.records.js';
import type { NewUserGroup, UserGroupRecord } from '../../../domain/user-groups/user-group.records.js';
import { groupAudit } from '../../../domain/user-groups/user-groups.rules.js';
import type { UserGroupTokenRotation } from '../../../domain/user-groups/user-groups.port.js';
import { pgNewGroupArrays, GROUP_COLUMN } from '../../user-group-columns.js';
import { auditEventPerBatchRow, batchAuditParameters, noEndpointWants } from '../audit-events.js';
import { lookupBatch } from '../../lookup-batch.js';

import { isStatementDefect } from '../postgres-errors.js';
import type { PostgresDatabase } from '../postgres-database.js';
import { statements } from '../statements.js';
import type { Statement } from '../statements.js';
import type { QueryResultRow } from 'pg';
import {
  decodeUserGroupRow,
  GROUP_COLUMNS,
  groupColumns,
  mappingOf,
  ancestorsOf,
  mappingRowIds,
  mappingRows,
  newGroupColumns,
  type PostgresUserGroupRow,
  type PostgresUserGroupColumns,
} from './columns.js';
import { insertGroup } from './group-writes.js';

interface CreateAsk {
  group: NewUserGroup;
  context: AuditContext;
}

interface RotationAsk {
  rotation: UserGroupTokenRotation;
  context: AuditContext;
}

/** The creates of roots of one turn: every column an array, the tenant's too; no parent. */
const BATCH_ROOTS = pgNewGroupArrays({ parentTeamId: 'NULL' });

/** The creates and rotations of one turn, each as one statement (docs/adr/0019-postgresql-group-writes.md). */
export const turnSql = statements(
  {
    // The creates of roots asked for in one turn, as one statement (docs/adr/0019-postgresql-group-writes.md): one row of unnest per
    // request (its batch_index, which also orders the team_ids drawn), each inserted while no endpoint
    // of its tenant wants the event and its provided id is free, with its mapping rows and its own audit
    // event. The caller sends each provided id of a tenant once, so a row joins back to one request.
    insertBatchIfNoEndpointWants: `WITH g AS (
      SELECT * FROM unnest(@indexes::int[], ${BATCH_ROOTS.arrays}) AS g(i, ${BATCH_ROOTS.aliases})
    ), inserted AS (
      INSERT INTO user_groups (${BATCH_ROOTS.columns})
      SELECT ${BATCH_ROOTS.values('g')}
      FROM g
      WHERE ${noEndpointWants('g.workspace_id', 'g.environment')}
      ORDER BY g.i
      ON CONFLICT (workspace_id, environment, provided_id) DO NOTHING
      RETURNING ${GROUP_COLUMNS}
    ), indexed AS (
      SELECT g.i AS batch_index, inserted.* FROM inserted
      JOIN g ON g.workspace_id = inserted.workspace_id AND g.environment = inserted.environment AND g.provided_id = inserted.provided_id
    ), mapped AS (
      INSERT INTO user_group_mappings (team_id, schema_id, data_source_id, schema_number, data_source_number)
      SELECT i.team_id, ${mappingRowIds('i.workspace_id')}, m.schema_id, m.data_source_id
      FROM unnest(@mappedIndexes::int[], @schemaIds::bigint[], @dataSourceIds::bigint[]) AS m(i, schema_id, data_source_id)
      JOIN indexed i ON i.batch_index = m.i
    ), ${auditEventPerBatchRow('indexed')}
    SELECT * FROM indexed`,
    // The rotations of several requests asked for in one turn, as one statement (docs/adr/0019-postgresql-group-writes.md): one row of
    // unnest per request (batch_index), each rotated while no endpoint of its tenant wants the event,
    // with its own audit event. A token asked for twice matches its row once: one request rotates it.
    rotateBatchIfNoEndpointWants: `WITH r AS (
      SELECT * FROM unnest(@indexes::int[], @currentTokenHashes::text[], @newTokenHashes::text[], @newTokenCiphertexts::text[],
        @updatedAts::timestamptz[], @workspaceIds::bigint[], @environments::text[])
        AS r(i, current_token_hash, new_token_hash, new_token_ciphertext, updated_at, workspace_id, environment)
    ), rotated AS (
      UPDATE user_groups g SET token_hash = r.new_token_hash, ${GROUP_COLUMN.tokenCiphertext} = r.new_token_ciphertext,
        ${GROUP_COLUMN.tokenGeneration} = g.${GROUP_COLUMN.tokenGeneration} + 1, version = g.version + 1, updated_at = r.updated_at
      FROM r
      WHERE g.token_hash = r.current_token_hash
        AND (g.workspace_id, g.environment) IS NOT DISTINCT FROM (r.workspace_id, r.environment)
        AND ${noEndpointWants('r.workspace_id', 'r.environment')}
      RETURNING r.i AS batch_index, ${groupColumns('g')}, ${mappingOf('g')}, ${ancestorsOf('g')}
    ), ${auditEventPerBatchRow('rotated')}
    SELECT batch_index, ${GROUP_COLUMNS}, mapping, ancestors FROM rotated`,
  },
  { prepared: true },
);

/**
 * The writes asked for in one turn of the event loop, batched: creates of roots and token rotations.
 * A rotation the batch statement does not make goes on `alone`, or to the transaction (`announced`).
 */
export function turnBatches(
  db: PostgresDatabase,
  rotations: {
    alone(rotation: UserGroupTokenRotation, context: AuditContext): Promise<UserGroupRecord | null>;
    announced(context: AuditContext, rotation: UserGroupTokenRotation): Promise<UserGroupRecord | null>;
  },
) {
  /**
   * A batch statement's rows (docs/adr/0019-postgresql-group-writes.md), or null when it failed on its data (a conflict, a deadlock,
   * a refused mapping, a lost connection), so that each ask runs alone; a statement that cannot run
   * as written would otherwise fall back on every turn, unseen, and is thrown instead (docs/adr/0019-postgresql-group-writes.md).
   */
  const batchRows = async <R extends QueryResultRow>(statement: Statement): Promise<R[] | null> => {
    try {
      return await db.rows<R>(statement);
    } catch (error) {
      if (isStatementDefect(error)) throw error;
      return null;
    }
  };

  /**
   * The creates of roots asked for in one turn of the event loop (docs/adr/0019-postgresql-group-writes.md), as the rotations are:
   * several go as one statement, one WAL flush and one round trip for all; a lone one, a create that
   * statement did not make (an endpoint wants the event, the provided id exists, or a later ask of a
   * provided id already in the statement) and every create of a batch whose statement failed run
   * alone as the one statement of docs/adr/0019-postgresql-group-writes.md, so that each outcome and each failure is its own request's
   * (and one that statement does not make either goes on to the transaction, as before). Each answer
   * is wrapped, so that a failure reaches only its own caller.
   */
  const createInTurn = lookupBatch(
    async (asks: CreateAsk[]): Promise<Array<{ outcome: Promise<UserGroupRecord | undefined> }>> => {
      const alone = ({ group, context }: CreateAsk) => ({ outcome: insertGroup(db, group, context) });
      // The first ask of each provided id in its tenant, by its index in `asks`.
      const firsts = new Map<string, number>();
      asks.forEach(({ group: { tenant, providedId } }, index) => {
        const key = `${tenant.workspaceId}\u0000${tenant.environment}\u0000${providedId}`;
        if (!firsts.has(key)) firsts.set(key, index);
      });
      const batch = [...firsts.values()];
      if (batch.length < 2) return asks.map(alone);
      const groups = batch.map((index) => asks[index]!.group);
      const { keys: mappedIndexes, ...mapped } = mappingRows(
        groups.map((group, position) => ({ key: position, mapping: group.mapping })),
      );
      const rows = await batchRows<PostgresUserGroupColumns & { batch_index: number }>(
        turnSql.insertBatchIfNoEndpointWants({
          indexes: groups.map((_, position) => position),
          workspaceIds: groups.map((group) => group.tenant.workspaceId),
          environments: groups.map((group) => group.tenant.environment),
          ...newGroupColumns(groups),
          mappedIndexes,
          ...mapped,
          ...batchAuditParameters(
            batch.map((index) => asks[index]!.context),
            batch.map((index) => groupAudit('user_group.created', asks[index]!.context.changes)),
          ),
        }),
      );
      if (rows === null) return asks.map(alone);
      const inserted = new Map(rows.map((row) => [batch[row.batch_index]!, row]));
      return asks.map((ask, index) => {
        const row = inserted.get(index);
        if (!row) return alone(ask);
        // RETURNING cannot see the mapping rows its sibling CTE inserts; they are the input.
        const mapping = ask.group.mapping.map((entry): [number, number] => [entry.schemaId, entry.dataSourceId]);
        return { outcome: Promise.resolve(decodeUserGroupRow({ ...row, mapping })) };
      });
    },
  );

  /**
   * The rotations asked for in one turn of the event loop (docs/adr/0019-postgresql-group-writes.md), as the reads are (lookup-batch.ts):
   * several go as one statement, one WAL flush and one round trip for all; a lone one, a rotation
   * that statement did not make (an endpoint wants the event, the token is gone) and every rotation
   * of a batch whose statement failed go on alone, as before, so that each outcome and each failure
   * is its own request's. Each answer is wrapped, so that a failure reaches only its own caller.
   */
  const rotateInTurn = lookupBatch(
    async (asks: RotationAsk[]): Promise<Array<{ outcome: Promise<UserGroupRecord | null> }>> => {
      const alone = ({ rotation, context }: RotationAsk) => ({ outcome: rotations.alone(rotation, context) });
      if (asks.length === 1) return asks.map(alone);
      const rows = await batchRows<PostgresUserGroupRow & { batch_index: number }>(
        turnSql.rotateBatchIfNoEndpointWants({
          indexes: asks.map((_, index) => index),
          currentTokenHashes: asks.map((ask) => ask.rotation.currentTokenHash),
          newTokenHashes: asks.map((ask) => ask.rotation.newTokenHash),
          newTokenCiphertexts: asks.map((ask) => ask.rotation.newTokenCiphertext),
          updatedAts: asks.map((ask) => ask.rotation.updatedAt),
          workspaceIds: asks.map((ask) => ask.rotation.tenant.workspaceId),
          environments: asks.map((ask) => ask.rotation.tenant.environment),
          ...batchAuditParameters(
            asks.map((ask) => ask.context),
            asks.map((ask) => groupAudit('user_group.token_rotated', ask.context.changes)),
          ),
        }),
      );
      if (rows === null) return asks.map(alone);
      const rotated = new Map(rows.map((row) => [row.batch_index, row]));
      return asks.map((ask, index) => {
        const row = rotated.get(index);
        // Not rotated by the statement: the transaction decides afresh (an endpoint's event, or null).
        return {
          outcome: row ? Promise.resolve(decodeUserGroupRow(row)) : rotations.announced(ask.context, ask.rotation),
        };
      });
    },
  );

  return { createInTurn, rotateInTurn };
}
