import type { ApiTokenRecord, AuditContext, NewApiToken } from '../../domain/models.js';
import type { Environment, Scope } from '../../domain/tenancy.js';
import { apiTokenCreatedEntry, apiTokenRevokedEntry } from '../audit-entries.js';
import type { Audited } from '../audit-entries.js';
import type { ApiTokenStore } from '../store.js';
import type { AuditEvents } from './audit-events.js';
import type { PostgresDatabase, Queryable } from './postgres-database.js';
import { iso, nullableIso, onlyRow, toNumber } from './rows.js';
import type { Int8 } from './rows.js';
import { statements } from './statements.js';

interface ApiTokenRow {
  id: Int8;
  workspace_id: Int8;
  environment: Environment;
  name: string;
  scope: Scope;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

function toApiToken(row: ApiTokenRow): ApiTokenRecord {
  return {
    id: toNumber(row.id),
    workspaceId: toNumber(row.workspace_id),
    environment: row.environment,
    name: row.name,
    scope: row.scope,
    createdAt: iso(row.created_at),
    lastUsedAt: nullableIso(row.last_used_at),
    revokedAt: nullableIso(row.revoked_at),
  };
}

const COLUMNS = 'id, workspace_id, environment, name, scope, created_at, last_used_at, revoked_at';

const sql = statements({
  insert: `INSERT INTO api_tokens (workspace_id, environment, name, scope, token_hash, created_at)
    VALUES (@workspaceId, @environment, @name, @scope, @tokenHash, @createdAt) RETURNING ${COLUMNS}`,
  // FOR UPDATE conflicts with the FOR KEY SHARE lock that every insert referencing the workspace
  // takes for its foreign key check, so while this lock is held no API token can appear in it.
  lockWorkspace: 'SELECT id FROM workspaces WHERE id = @workspaceId FOR UPDATE',
  anyInWorkspace: 'SELECT 1 FROM api_tokens WHERE workspace_id = @workspaceId LIMIT 1',
  liveByHash: `SELECT ${COLUMNS} FROM api_tokens WHERE token_hash = @tokenHash AND revoked_at IS NULL`,
  list: `SELECT ${COLUMNS} FROM api_tokens WHERE workspace_id = @workspaceId AND revoked_at IS NULL ORDER BY id`,
  revoke: `UPDATE api_tokens SET revoked_at = @at WHERE id = @id AND workspace_id = @workspaceId AND revoked_at IS NULL
    RETURNING ${COLUMNS}`,
  recordUse: 'UPDATE api_tokens SET last_used_at = @at WHERE id = @id',
}, { prepared: true });

export function apiTokenMethods(db: PostgresDatabase, audit: AuditEvents): ApiTokenStore {
  const insertAll = async (tx: Queryable, tokens: NewApiToken[]): Promise<Audited<ApiTokenRecord[]>> => {
    const records: ApiTokenRecord[] = [];
    for (const token of tokens) {
      records.push(toApiToken(onlyRow(await tx.rows<ApiTokenRow>(sql.insert({ ...token })), 'api token insert')));
    }
    return { result: records, entries: records.map(apiTokenCreatedEntry) };
  };

  const insertOne = audit.withAudit((tx, _context: AuditContext, token: NewApiToken) => insertAll(tx, [token]));

  // Concurrent first starts queue on the workspace row lock; each reads the tokens only once it holds
  // the lock (READ COMMITTED gives that statement a fresh snapshot), so only the first one inserts.
  const insertIfNone = audit.withAudit(async (tx, _context: AuditContext, workspaceId: number, tokens: NewApiToken[]) => {
    await tx.rows(sql.lockWorkspace({ workspaceId }));
    const existing = await tx.rows(sql.anyInWorkspace({ workspaceId }));
    return existing.length > 0 ? { result: null, entries: [] } : insertAll(tx, tokens);
  });

  const revoke = audit.withAudit(async (tx, context: AuditContext, workspaceId: number, id: number) => {
    const [row] = await tx.rows<ApiTokenRow>(sql.revoke({ at: context.at, id, workspaceId }));
    if (!row) return { result: null, entries: [] };
    const record = toApiToken(row);
    return { result: record, entries: [apiTokenRevokedEntry(record)] };
  });

  return {
    insertApiToken: async (token, context) => onlyRow(await insertOne(context, token), 'api token insert'),
    insertApiTokensIfWorkspaceHasNone: (workspaceId, tokens, context) => insertIfNone(context, workspaceId, tokens),
    findApiTokenByHash: async (tokenHash) => {
      const [row] = await db.rows<ApiTokenRow>(sql.liveByHash({ tokenHash }));
      return row ? toApiToken(row) : null;
    },
    listApiTokens: async (workspaceId) => (await db.rows<ApiTokenRow>(sql.list({ workspaceId }))).map(toApiToken),
    revokeApiToken: (workspaceId, id, context) => revoke(context, workspaceId, id),
    // One statement, so atomic on its own; bookkeeping writes no audit event.
    recordApiTokenUse: async (id, at) => {
      await db.rows(sql.recordUse({ id, at }));
    },
  };
}
