import type { Database } from 'better-sqlite3';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type {
  EmbedTokenRevocationStore,
  GroupRevocationRecord,
  TokenRevocation,
  TokenRevocationRecord,
} from '../../domain/embed-tokens/embed-token-revocations.port.js';
import { revocationEntry } from '../../domain/embed-tokens/embed-token-revocations.rules.js';
import type { Tenant } from '../../domain/tenancy.js';
import type { UserGroupRecord } from '../../domain/user-groups/user-group.records.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './busy-retry.js';
import { preparedOnFirstUse } from './prepared.js';
import { decodeUserGroupRow, SELECT_GROUP, type SqliteUserGroupCells } from './user-groups.js';
import { GROUP_COLUMN } from '../user-group-columns.js';

/** The group's columns, then whether the token of @jti is revoked on its own (its tenant's entry). */
const GROUP_AND_REVOKED = `${SELECT_GROUP.slice(0, SELECT_GROUP.lastIndexOf(' FROM user_groups g'))},
  EXISTS (SELECT 1 FROM embed_token_revocations r
    WHERE r.workspace_id = g.workspace_id AND r.environment = g.environment AND r.jti = @jti) AS revoked
  FROM user_groups g`;

const IN_FORCE = 'workspace_id = @workspaceId AND environment = @environment AND expires_at > @now';

/** Revocations of embed tokens on SQLite; group entries are the triggers' (migration 15). */
export function embedTokenRevocationMethods(db: Database, audit: AuditEvents): Synchronous<EmbedTokenRevocationStore> {
  const sql = preparedOnFirstUse(db, {
    secret: 'SELECT secret FROM embed_revocation_keys WHERE id = 1',
    insertToken: `INSERT INTO embed_token_revocations (workspace_id, environment, jti, expires_at)
      VALUES (@workspaceId, @environment, @jti, @expiresAt)
      ON CONFLICT (workspace_id, environment, jti) WHERE jti IS NOT NULL DO NOTHING`,
    raiseGeneration: `UPDATE user_groups SET ${GROUP_COLUMN.tokenGeneration} = ${GROUP_COLUMN.tokenGeneration} + 1
      WHERE team_id = ? AND workspace_id = ? AND environment = ?`,
    version: `SELECT coalesce(max(id), 0) AS generation, count(*) AS count, coalesce(sum(id), 0) AS total
      FROM embed_token_revocations WHERE ${IN_FORCE}`,
    groups: `SELECT team_id AS teamId, before_generation AS beforeGeneration, expires_at AS expiresAt
      FROM embed_token_revocations WHERE ${IN_FORCE} AND jti IS NULL ORDER BY id`,
    tokens: `SELECT jti, expires_at AS expiresAt FROM embed_token_revocations WHERE ${IN_FORCE} AND jti IS NOT NULL ORDER BY id`,
    prune: 'DELETE FROM embed_token_revocations WHERE expires_at <= ?',
  });
  const reads = preparedOnFirstUse(
    db,
    {
      group: `${SELECT_GROUP} WHERE g.team_id = ? AND g.workspace_id = ? AND g.environment = ?`,
      // The group's cells, then whether the jti is revoked: verify's one statement.
      embedGroup: `${GROUP_AND_REVOKED} WHERE g.team_id = @teamId AND g.workspace_id = @workspaceId AND g.environment = @environment`,
    },
    { raw: true },
  );
  const groupIn = (tenant: Tenant, teamId: number): UserGroupRecord | null => {
    const cells = reads.group.get(teamId, tenant.workspaceId, tenant.environment) as SqliteUserGroupCells | undefined;
    return cells ? decodeUserGroupRow(cells) : null;
  };

  const revokeToken = audit.withAudit((_context: AuditContext, revocation: TokenRevocation) => {
    const found = groupIn(revocation.tenant, revocation.teamId);
    if (!found) return { result: null, entries: [] };
    const { changes } = sql.insertToken.run({
      ...revocation.tenant,
      jti: revocation.jti,
      expiresAt: revocation.expiresAt,
    });
    return { result: found, entries: changes === 0 ? [] : [revocationEntry(found, revocation.jti)] };
  });

  const revokeGroup = audit.withAudit((_context: AuditContext, tenant: Tenant, teamId: number) => {
    if (sql.raiseGeneration.run(teamId, tenant.workspaceId, tenant.environment).changes === 0)
      return { result: null, entries: [] };
    const found = groupIn(tenant, teamId)!;
    return { result: found, entries: [revocationEntry(found, null)] };
  });

  return {
    embedRevocationSecret: () => (sql.secret.get() as { secret: string }).secret,
    revokeEmbedToken: (revocation, context) => revokeToken(context, revocation),
    revokeUserGroupEmbedTokens: (tenant, teamId, context) => revokeGroup(context, tenant, teamId),
    findEmbedTokenGroup: (tenant, teamId, jti) => {
      const cells = reads.embedGroup.get({ ...tenant, teamId, jti }) as unknown[] | undefined;
      if (!cells) return null;
      return { group: decodeUserGroupRow(cells as SqliteUserGroupCells), revoked: cells[cells.length - 1] === 1 };
    },
    embedTokenRevocationsVersion: (tenant, now) => {
      const { generation, count, total } = sql.version.get({ ...tenant, now }) as Record<string, number>;
      return `${generation}.${count}.${total}`;
    },
    listEmbedTokenRevocations: db.transaction((tenant: Tenant, now: number) => {
      const groups = sql.groups.all({ ...tenant, now }) as GroupRevocationRecord[];
      const tokens = sql.tokens.all({ ...tenant, now }) as TokenRevocationRecord[];
      const { generation } = sql.version.get({ ...tenant, now }) as { generation: number };
      return { generation, groups, tokens };
    }),
    pruneEmbedTokenRevocations: (now) => sql.prune.run(now).changes,
  };
}
