import type { Database } from 'better-sqlite3';
import type { ApiTokenRecord, NewApiToken, RateLimit } from '../../domain/api-tokens/api-token.records.js';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type { ApiTokenStore } from '../../domain/api-tokens/api-tokens.port.js';
import { rateLimitFromColumns, rateLimitParameters } from '../api-token-records.js';
import { apiTokenCreated, apiTokenRevoked, planRateLimitUpdate } from '../../domain/api-tokens/api-tokens.rules.js';
import type { Audited } from '../../domain/audit/audit-entry.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './busy-retry.js';
import { liveTokenCache } from './live-token-cache.js';
import { preparedOnFirstUse } from './prepared.js';

/** An API token row's columns, named as ApiTokenRow names them. */
export const API_TOKEN_COLUMNS = `id, workspace_id AS workspaceId, environment, name, scope,
  rate_limit_per_second AS rateLimitPerSecond, rate_limit_burst AS rateLimitBurst,
  created_at AS createdAt, last_used_at AS lastUsedAt, revoked_at AS revokedAt`;

export type ApiTokenRow = Omit<ApiTokenRecord, 'rateLimit'> & {
  rateLimitPerSecond: number | null;
  rateLimitBurst: number | null;
};

export function toApiToken({ rateLimitPerSecond, rateLimitBurst, ...row }: ApiTokenRow): ApiTokenRecord {
  return { ...row, rateLimit: rateLimitFromColumns(rateLimitPerSecond, rateLimitBurst) };
}

const nullableApiToken = (row: unknown): ApiTokenRecord | null =>
  row === undefined ? null : toApiToken(row as ApiTokenRow);

export function apiTokenMethods(db: Database, audit: AuditEvents): Synchronous<ApiTokenStore> {
  const cache = liveTokenCache(db);
  const sql = preparedOnFirstUse(db, {
    insert: `INSERT INTO api_tokens (workspace_id, environment, name, scope, rate_limit_per_second, rate_limit_burst, token_hash, created_at)
      VALUES (@workspaceId, @environment, @name, @scope, @rateLimitPerSecond, @rateLimitBurst, @tokenHash, @createdAt) RETURNING ${API_TOKEN_COLUMNS}`,
    anyInWorkspace: 'SELECT 1 FROM api_tokens WHERE workspace_id = ? LIMIT 1',
    liveByHash: `SELECT ${API_TOKEN_COLUMNS} FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL`,
    liveById: `SELECT ${API_TOKEN_COLUMNS} FROM api_tokens WHERE id = ? AND workspace_id = ? AND revoked_at IS NULL`,
    list: `SELECT ${API_TOKEN_COLUMNS} FROM api_tokens WHERE workspace_id = ? AND revoked_at IS NULL ORDER BY id`,
    setRateLimit:
      'UPDATE api_tokens SET rate_limit_per_second = @rateLimitPerSecond, rate_limit_burst = @rateLimitBurst WHERE id = @id',
    revoke: `UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND workspace_id = ? AND revoked_at IS NULL
      RETURNING ${API_TOKEN_COLUMNS}`,
    recordUse: 'UPDATE api_tokens SET last_used_at = ? WHERE id = ?',
  });

  const insertAll = (tokens: NewApiToken[]): Audited<ApiTokenRecord[]> => {
    const records = tokens.map((token) =>
      toApiToken(sql.insert.get({ ...token, ...rateLimitParameters(token.rateLimit) }) as ApiTokenRow),
    );
    return { result: records, entries: records.map(apiTokenCreated) };
  };

  const insertOne = audit.withAudit((_context: AuditContext, token: NewApiToken) => insertAll([token]));

  // The existence check and the inserts share one immediate transaction, so concurrent first starts
  // serialise on the write lock and only the first one inserts.
  const insertIfNone = audit.withAudit((_context: AuditContext, workspaceId: number, tokens: NewApiToken[]) =>
    sql.anyInWorkspace.get(workspaceId) === undefined ? insertAll(tokens) : { result: null, entries: [] },
  );

  // Read and written under the write lock of one immediate transaction: the audited before is the
  // value the update replaced.
  const updateRateLimit = audit.withAudit(
    (
      _context: AuditContext,
      workspaceId: number,
      id: number,
      rateLimit: RateLimit | null,
    ): Audited<ApiTokenRecord | null> => {
      const plan = planRateLimitUpdate(nullableApiToken(sql.liveById.get(id, workspaceId)), rateLimit);
      if (plan.write) {
        cache.invalidate();
        sql.setRateLimit.run({ id, ...rateLimitParameters(plan.write.rateLimit) });
      }
      return plan;
    },
  );

  const revoke = audit.withAudit((context: AuditContext, workspaceId: number, id: number) => {
    cache.invalidate();
    return apiTokenRevoked(nullableApiToken(sql.revoke.get(context.at, id, workspaceId)));
  });

  return {
    insertApiToken: (token, context) => {
      const [record] = insertOne(context, token);
      if (!record) throw new Error('api token insert returned no row');
      return record;
    },
    insertApiTokensIfWorkspaceHasNone: (workspaceId, tokens, context) => insertIfNone(context, workspaceId, tokens),
    findApiTokenByHash: (tokenHash) => {
      const tokens = cache.current();
      const cached = tokens.get(tokenHash);
      if (cached) return cached;
      const record = nullableApiToken(sql.liveByHash.get(tokenHash));
      if (record) tokens.set(tokenHash, record);
      return record;
    },
    listApiTokens: (workspaceId) => (sql.list.all(workspaceId) as ApiTokenRow[]).map(toApiToken),
    updateApiTokenRateLimit: (workspaceId, id, rateLimit, context) =>
      updateRateLimit(context, workspaceId, id, rateLimit),
    revokeApiToken: (workspaceId, id, context) => revoke(context, workspaceId, id),
    recordApiTokenUse: (id, at) => {
      cache.invalidate();
      sql.recordUse.run(at, id);
    },
  };
}
