import type { Database, Statement } from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import type { ApiTokenRecord, AuditContext, NewApiToken } from '../../domain/models.js';
import type { ApiTokenStore } from '../store.js';
import { apiTokenCreatedEntry, apiTokenRevokedEntry } from '../audit-entries.js';
import type { Audited } from '../audit-entries.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './guard.js';
import { preparedOnFirstUse } from './prepared.js';

const COLUMNS = `id, workspace_id AS workspaceId, environment, name, scope,
  created_at AS createdAt, last_used_at AS lastUsedAt, revoked_at AS revokedAt`;

/** Live tokens remembered per connection; misses are not kept, so unknown tokens cannot fill it. */
const CACHED_TOKENS = 10_000;

/**
 * Every request looks its API token up, so live tokens are cached; a cached token can never outlive
 * a change. The cache is dropped whenever another connection has committed anything (PRAGMA
 * data_version moves: another worker, a CLI command) and whenever this connection changes a token.
 * Checking data_version costs a fraction of the lookup it saves.
 */
function liveTokenCache(db: Database) {
  const tokens = new LRUCache<string, ApiTokenRecord>({ max: CACHED_TOKENS });
  let dataVersion: Statement | undefined;
  let seenVersion: unknown;
  return {
    /** The cache, emptied first if another connection has committed since the last look. */
    current(): LRUCache<string, ApiTokenRecord> {
      const version = (dataVersion ??= db.prepare('PRAGMA data_version').pluck()).get();
      if (version !== seenVersion) {
        tokens.clear();
        seenVersion = version;
      }
      return tokens;
    },
    /** Called by every change this connection makes to api_tokens. */
    invalidate: () => tokens.clear(),
  };
}

export function apiTokenMethods(db: Database, audit: AuditEvents): Synchronous<ApiTokenStore> {
  const cache = liveTokenCache(db);
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
    cache.invalidate();
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
    findApiTokenByHash: (tokenHash) => {
      const tokens = cache.current();
      const cached = tokens.get(tokenHash);
      if (cached) return cached;
      const record = sql.liveByHash.get(tokenHash) as ApiTokenRecord | undefined;
      if (!record) return null;
      tokens.set(tokenHash, record);
      return record;
    },
    listApiTokens: (workspaceId) => sql.list.all(workspaceId) as ApiTokenRecord[],
    revokeApiToken: (workspaceId, id, context) => revoke(context, workspaceId, id),
    recordApiTokenUse: (id, at) => {
      cache.invalidate();
      sql.recordUse.run(at, id);
    },
  };
}
