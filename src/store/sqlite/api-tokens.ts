import type { Database } from 'better-sqlite3';
import type { ApiTokenRecord, AuditContext, NewApiToken } from '../../domain/models.js';
import type { ApiTokenStore } from '../store.js';
import { apiTokenCreatedEntry, apiTokenRevokedEntry } from '../audit-entries.js';
import type { Audited } from '../audit-entries.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './guard.js';
import { preparedOnFirstUse } from './prepared.js';

const COLUMNS = `id, workspace_id AS workspaceId, environment, name, scope,
  created_at AS createdAt, last_used_at AS lastUsedAt, revoked_at AS revokedAt`;

export function apiTokenMethods(db: Database, audit: AuditEvents): Synchronous<ApiTokenStore> {
  const sql = preparedOnFirstUse(db, {
    insert: `INSERT INTO api_tokens (workspace_id, environment, name, scope, token_hash, created_at)
      VALUES (@workspaceId, @environment, @name, @scope, @tokenHash, @createdAt) RETURNING ${COLUMNS}`,
    anyInWorkspace: 'SELECT 1 FROM api_tokens WHERE workspace_id = ? LIMIT 1',
    liveByHash: `SELECT ${COLUMNS} FROM api_tokens WHERE token_hash = ? AND revoked_at IS NULL`,
    list: `SELECT ${COLUMNS} FROM api_tokens WHERE workspace_id = ? AND revoked_at IS NULL ORDER BY id`,
    revoke: `UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND workspace_id = ? AND revoked_at IS NULL
      RETURNING ${COLUMNS}`,
    recordUse: 'UPDATE api_tokens SET last_used_at = ? WHERE id = ?',
  });

  const insertAll = (tokens: NewApiToken[]): Audited<ApiTokenRecord[]> => {
    const records = tokens.map((token) => sql.insert.get(token) as ApiTokenRecord);
    return { result: records, entries: records.map(apiTokenCreatedEntry) };
  };

  const insertOne = audit.withAudit((_context: AuditContext, token: NewApiToken) => insertAll([token]));

  // The existence check and the inserts share one immediate transaction, so concurrent first starts
  // serialise on the write lock and only the first one inserts.
  const insertIfNone = audit.withAudit((_context: AuditContext, workspaceId: number, tokens: NewApiToken[]) =>
    sql.anyInWorkspace.get(workspaceId) === undefined ? insertAll(tokens) : { result: null, entries: [] },
  );

  const revoke = audit.withAudit((context: AuditContext, workspaceId: number, id: number) => {
    const record = sql.revoke.get(context.at, id, workspaceId) as ApiTokenRecord | undefined;
    if (!record) return { result: null, entries: [] };
    return { result: record, entries: [apiTokenRevokedEntry(record)] };
  });

  return {
    insertApiToken: (token, context) => {
      const [record] = insertOne(context, token);
      if (!record) throw new Error('api token insert returned no row');
      return record;
    },
    insertApiTokensIfWorkspaceHasNone: (workspaceId, tokens, context) => insertIfNone(context, workspaceId, tokens),
    findApiTokenByHash: (tokenHash) => (sql.liveByHash.get(tokenHash) as ApiTokenRecord | undefined) ?? null,
    listApiTokens: (workspaceId) => sql.list.all(workspaceId) as ApiTokenRecord[],
    revokeApiToken: (workspaceId, id, context) => revoke(context, workspaceId, id),
    recordApiTokenUse: (id, at) => {
      sql.recordUse.run(at, id);
    },
  };
}
