import type { AuditContext } from '../../domain/audit/audit.records.js';
import type {
  EmbedTokenRevocationStore,
  TokenRevocation,
} from '../../domain/embed-tokens/embed-token-revocations.port.js';
import { revocationEntry } from '../../domain/embed-tokens/embed-token-revocations.rules.js';
import type { Tenant } from '../../domain/tenancy.js';
import type { UserGroupRecord } from '../../domain/user-groups/user-group.records.js';
import type { AuditEvents } from './audit-events.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';
import { toNumber, type Int8 } from './rows.js';
import { statements } from './statements.js';
import { decodeUserGroupRow, SELECT_GROUP, type PostgresUserGroupRow } from './user-groups/index.js';
import { GROUP_COLUMN } from '../user-group-columns.js';

/** The group's columns, then whether the token of @jti is revoked on its own (its tenant's entry). */
const GROUP_AND_REVOKED = `${SELECT_GROUP.slice(0, SELECT_GROUP.lastIndexOf(' FROM user_groups g'))},
  EXISTS (SELECT 1 FROM embed_token_revocations r
    WHERE r.workspace_id = g.workspace_id AND r.environment = g.environment AND r.jti = @jti) AS revoked
  FROM user_groups g`;

const IN_FORCE = 'workspace_id = @workspaceId AND environment = @environment AND expires_at > @now';

const sql = statements({
  secret: 'SELECT secret FROM embed_revocation_keys WHERE id = 1',
  group: `${SELECT_GROUP} WHERE g.team_id = @teamId AND g.workspace_id = @workspaceId AND g.environment = @environment`,
  insertToken: `INSERT INTO embed_token_revocations (workspace_id, environment, jti, expires_at)
    VALUES (@workspaceId, @environment, @jti, @expiresAt)
    ON CONFLICT (workspace_id, environment, jti) WHERE jti IS NOT NULL DO NOTHING RETURNING id`,
  raiseGeneration: `UPDATE user_groups SET ${GROUP_COLUMN.tokenGeneration} = ${GROUP_COLUMN.tokenGeneration} + 1
    WHERE team_id = @teamId AND workspace_id = @workspaceId AND environment = @environment RETURNING team_id`,
  version: `SELECT coalesce(max(id), 0) AS generation, count(*) AS count, coalesce(sum(id), 0) AS total
    FROM embed_token_revocations WHERE ${IN_FORCE}`,
  groups: `SELECT team_id, before_generation, expires_at
    FROM embed_token_revocations WHERE ${IN_FORCE} AND jti IS NULL ORDER BY id`,
  tokens: `SELECT jti, expires_at FROM embed_token_revocations WHERE ${IN_FORCE} AND jti IS NOT NULL ORDER BY id`,
  prune: `WITH pruned AS (DELETE FROM embed_token_revocations WHERE expires_at <= @now RETURNING 1)
    SELECT count(*) AS count FROM pruned`,
});
// Online verify's read, kept prepared on each connection: the group and whether the jti is revoked, at once.
const verifyReads = statements(
  {
    embedGroup: `${GROUP_AND_REVOKED} WHERE g.team_id = @teamId AND g.workspace_id = @workspaceId AND g.environment = @environment`,
  },
  { prepared: true },
);

/** Revocations of embed tokens on PostgreSQL; group entries are the trigger's (migration 16). */
export function embedTokenRevocationMethods(db: PostgresDatabase, audit: AuditEvents): EmbedTokenRevocationStore {
  const groupIn = async (q: Queryable, tenant: Tenant, teamId: number): Promise<UserGroupRecord | null> => {
    const [row] = await q.rows<PostgresUserGroupRow>(sql.group({ ...tenant, teamId }));
    return row ? decodeUserGroupRow(row) : null;
  };

  const revokeToken = audit.withAudit(async (tx, _context: AuditContext, revocation: TokenRevocation) => {
    // A deletion committed meanwhile leaves a needless entry: its own (the trigger's) covers the token.
    const found = await groupIn(tx, revocation.tenant, revocation.teamId);
    if (!found) return { result: null, entries: [] };
    const inserted = await tx.rows(
      sql.insertToken({ ...revocation.tenant, jti: revocation.jti, expiresAt: revocation.expiresAt }),
    );
    return { result: found, entries: inserted.length === 0 ? [] : [revocationEntry(found, revocation.jti)] };
  });

  const revokeGroup = audit.withAudit(async (tx, _context: AuditContext, tenant: Tenant, teamId: number) => {
    const raised = await tx.rows(sql.raiseGeneration({ ...tenant, teamId }));
    if (raised.length === 0) return { result: null, entries: [] };
    const found = (await groupIn(tx, tenant, teamId))!;
    return { result: found, entries: [revocationEntry(found, null)] };
  });

  return {
    embedRevocationSecret: async () => (await db.rows<{ secret: string }>(sql.secret()))[0]!.secret,
    revokeEmbedToken: (revocation, context) => revokeToken(context, revocation),
    revokeUserGroupEmbedTokens: (tenant, teamId, context) => revokeGroup(context, tenant, teamId),
    findEmbedTokenGroup: async (tenant, teamId, jti) => {
      const [row] = await db.rows<PostgresUserGroupRow & { revoked: boolean }>(
        verifyReads.embedGroup({ ...tenant, teamId, jti }),
      );
      return row ? { group: decodeUserGroupRow(row), revoked: row.revoked } : null;
    },
    embedTokenRevocationsVersion: async (tenant, now) => {
      const [row] = await db.rows<{ generation: Int8; count: Int8; total: Int8 }>(sql.version({ ...tenant, now }));
      return `${toNumber(row!.generation)}.${toNumber(row!.count)}.${String(row!.total)}`;
    },
    listEmbedTokenRevocations: (tenant, now) =>
      db.transaction(async (tx) => {
        const groups = await tx.rows<{ team_id: Int8; before_generation: Int8; expires_at: Int8 }>(
          sql.groups({ ...tenant, now }),
        );
        const tokens = await tx.rows<{ jti: string; expires_at: Int8 }>(sql.tokens({ ...tenant, now }));
        const [version] = await tx.rows<{ generation: Int8 }>(sql.version({ ...tenant, now }));
        return {
          generation: toNumber(version!.generation),
          groups: groups.map((row) => ({
            teamId: toNumber(row.team_id),
            beforeGeneration: toNumber(row.before_generation),
            expiresAt: toNumber(row.expires_at),
          })),
          tokens: tokens.map((row) => ({ jti: row.jti, expiresAt: toNumber(row.expires_at) })),
        };
      }),
    pruneEmbedTokenRevocations: async (now) => toNumber((await db.rows<{ count: Int8 }>(sql.prune({ now })))[0]!.count),
  };
}
