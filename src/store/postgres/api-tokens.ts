import type { ApiTokenRecord, NewApiToken, RateLimit } from '../../domain/api-tokens/api-token.records.js';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type { Environment, Scope } from '../../domain/tenancy.js';
import { rateLimitFromColumns, rateLimitParameters } from '../api-token-records.js';
import { apiTokenCreated, apiTokenRevoked, planRateLimitUpdate } from '../../domain/api-tokens/api-tokens.rules.js';
import type { Audited } from '../../domain/audit/audit-entry.js';
import type { ApiTokenStore } from '../../domain/api-tokens/api-tokens.port.js';
import type { AuditEvents } from './audit-events.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';
import { iso, nullableIso, onlyRow, toNumber } from './rows.js';
import type { Int8 } from './rows.js';
import { statements } from './statements.js';

export interface ApiTokenRow {
  id: Int8;
  workspace_id: Int8;
  environment: Environment;
  name: string;
  scope: Scope;
  rate_limit_per_second: number | null;
  rate_limit_burst: number | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export function toApiToken(row: ApiTokenRow): ApiTokenRecord {
  return {
    id: toNumber(row.id),
    workspaceId: toNumber(row.workspace_id),
    environment: row.environment,
    name: row.name,
    scope: row.scope,
    rateLimit: rateLimitFromColumns(row.rate_limit_per_second, row.rate_limit_burst),
    createdAt: iso(row.created_at),
    lastUsedAt: nullableIso(row.last_used_at),
    revokedAt: nullableIso(row.revoked_at),
  };
}

/** An API token row's columns, as ApiTokenRow names them. */
export const API_TOKEN_COLUMNS =
  'id, workspace_id, environment, name, scope, rate_limit_per_second, rate_limit_burst, created_at, last_used_at, revoked_at';

const sql = statements(
  {
    insert: `INSERT INTO api_tokens (workspace_id, environment, name, scope, rate_limit_per_second, rate_limit_burst, token_hash, created_at)
    VALUES (@workspaceId, @environment, @name, @scope, @rateLimitPerSecond, @rateLimitBurst, @tokenHash, @createdAt) RETURNING ${API_TOKEN_COLUMNS}`,
    // FOR UPDATE conflicts with the FOR KEY SHARE lock that every insert referencing the workspace
    // takes for its foreign key check, so while this lock is held no API token can appear in it.
    lockWorkspace: 'SELECT id FROM workspaces WHERE id = @workspaceId FOR UPDATE',
    anyInWorkspace: 'SELECT 1 FROM api_tokens WHERE workspace_id = @workspaceId LIMIT 1',
    liveByHash: `SELECT ${API_TOKEN_COLUMNS} FROM api_tokens WHERE token_hash = @tokenHash AND revoked_at IS NULL`,
    // FOR UPDATE: the audited before is the value the update replaces, whatever runs alongside.
    liveByIdForUpdate: `SELECT ${API_TOKEN_COLUMNS} FROM api_tokens WHERE id = @id AND workspace_id = @workspaceId AND revoked_at IS NULL FOR UPDATE`,
    list: `SELECT ${API_TOKEN_COLUMNS} FROM api_tokens WHERE workspace_id = @workspaceId AND revoked_at IS NULL ORDER BY id`,
    setRateLimit:
      'UPDATE api_tokens SET rate_limit_per_second = @rateLimitPerSecond, rate_limit_burst = @rateLimitBurst WHERE id = @id',
    revoke: `UPDATE api_tokens SET revoked_at = @at WHERE id = @id AND workspace_id = @workspaceId AND revoked_at IS NULL
    RETURNING ${API_TOKEN_COLUMNS}`,
    recordUse: 'UPDATE api_tokens SET last_used_at = @at WHERE id = @id',
  },
  { prepared: true },
);

export function apiTokenMethods(db: PostgresDatabase, audit: AuditEvents): ApiTokenStore {
  const insertAll = async (tx: Queryable, tokens: NewApiToken[]): Promise<Audited<ApiTokenRecord[]>> => {
    const records: ApiTokenRecord[] = [];
    for (const token of tokens) {
      records.push(
        toApiToken(
          onlyRow(
            await tx.rows<ApiTokenRow>(sql.insert({ ...token, ...rateLimitParameters(token.rateLimit) })),
            'api token insert',
          ),
        ),
      );
    }
    return { result: records, entries: records.map(apiTokenCreated) };
  };

  const insertOne = audit.withAudit((tx, _context: AuditContext, token: NewApiToken) => insertAll(tx, [token]));

  // Concurrent first starts queue on the workspace row lock; each reads the tokens only once it holds
  // the lock (READ COMMITTED gives that statement a fresh snapshot), so only the first one inserts.
  const insertIfNone = audit.withAudit(
    async (tx, _context: AuditContext, workspaceId: number, tokens: NewApiToken[]) => {
      await tx.rows(sql.lockWorkspace({ workspaceId }));
      const existing = await tx.rows(sql.anyInWorkspace({ workspaceId }));
      return existing.length > 0 ? { result: null, entries: [] } : insertAll(tx, tokens);
    },
  );

  const updateRateLimit = audit.withAudit(
    async (
      tx,
      _context: AuditContext,
      workspaceId: number,
      id: number,
      rateLimit: RateLimit | null,
    ): Promise<Audited<ApiTokenRecord | null>> => {
      const [row] = await tx.rows<ApiTokenRow>(sql.liveByIdForUpdate({ id, workspaceId }));
      const plan = planRateLimitUpdate(row ? toApiToken(row) : null, rateLimit);
      if (plan.write) await tx.rows(sql.setRateLimit({ id, ...rateLimitParameters(plan.write.rateLimit) }));
      return plan;
    },
  );

  const revoke = audit.withAudit(async (tx, context: AuditContext, workspaceId: number, id: number) => {
    const [row] = await tx.rows<ApiTokenRow>(sql.revoke({ at: context.at, id, workspaceId }));
    return apiTokenRevoked(row ? toApiToken(row) : null);
  });

  return {
    insertApiToken: async (token, context) => onlyRow(await insertOne(context, token), 'api token insert'),
    insertApiTokensIfWorkspaceHasNone: (workspaceId, tokens, context) => insertIfNone(context, workspaceId, tokens),
    findApiTokenByHash: async (tokenHash) => {
      const [row] = await db.rows<ApiTokenRow>(sql.liveByHash({ tokenHash }));
      return row ? toApiToken(row) : null;
    },
    listApiTokens: async (workspaceId) => (await db.rows<ApiTokenRow>(sql.list({ workspaceId }))).map(toApiToken),
    updateApiTokenRateLimit: (workspaceId, id, rateLimit, context) =>
      updateRateLimit(context, workspaceId, id, rateLimit),
    revokeApiToken: (workspaceId, id, context) => revoke(context, workspaceId, id),
    // One statement, so atomic on its own; bookkeeping writes no audit event.
    recordApiTokenUse: async (id, at) => {
      await db.rows(sql.recordUse({ id, at }));
    },
  };
}
