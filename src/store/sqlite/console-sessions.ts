import type { Database } from 'better-sqlite3';
import {
  consoleSessionEnded,
  consoleSessionStarted,
  type ConsoleSessionTenant,
} from '../../domain/console-sessions/console-sessions.rules.js';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type { ConsoleSessionRecord, NewConsoleSession } from '../../domain/console-sessions/console-session.records.js';
import type { ConsoleSessionStore } from '../../domain/console-sessions/console-sessions.port.js';
import { API_TOKEN_COLUMNS, toApiToken, type ApiTokenRow } from './api-tokens.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './busy-retry.js';
import { preparedOnFirstUse } from './prepared.js';

const COLUMNS =
  'id, api_token_id AS apiTokenId, created_at AS createdAt, last_seen_at AS lastSeenAt, expires_at AS expiresAt';

export function consoleSessionMethods(db: Database, audit: AuditEvents): Synchronous<ConsoleSessionStore> {
  const sql = preparedOnFirstUse(db, {
    insert: `INSERT INTO console_sessions (id_hash, api_token_id, created_at, last_seen_at, expires_at)
      VALUES (@idHash, @apiTokenId, @createdAt, @createdAt, @expiresAt) RETURNING ${COLUMNS}`,
    byHash: `SELECT ${COLUMNS} FROM console_sessions WHERE id_hash = ?`,
    liveToken: `SELECT ${API_TOKEN_COLUMNS} FROM api_tokens WHERE id = ? AND revoked_at IS NULL`,
    tenant: `SELECT s.id AS sessionId, t.workspace_id AS workspaceId, t.environment
      FROM console_sessions s JOIN api_tokens t ON t.id = s.api_token_id WHERE s.id = ?`,
    touch: 'UPDATE console_sessions SET last_seen_at = ?, expires_at = ? WHERE id = ?',
    delete: 'DELETE FROM console_sessions WHERE id = ?',
    purge: 'DELETE FROM console_sessions WHERE id IN (SELECT id FROM console_sessions WHERE expires_at <= ? LIMIT ?)',
  });

  const insert = audit.withAudit((_context: AuditContext, session: NewConsoleSession) => {
    const { idHash, apiToken, createdAt, expiresAt } = session;
    const record = sql.insert.get({ idHash, apiTokenId: apiToken.id, createdAt, expiresAt }) as ConsoleSessionRecord;
    const tenant = { sessionId: record.id, workspaceId: apiToken.workspaceId, environment: apiToken.environment };
    return { result: record, entries: [consoleSessionStarted(tenant)] };
  });

  const remove = audit.withAudit((_context: AuditContext, id: number) => {
    const tenant = sql.tenant.get(id) as ConsoleSessionTenant | undefined;
    if (!tenant) return { result: false, entries: [] };
    sql.delete.run(id);
    return { result: true, entries: [consoleSessionEnded(tenant)] };
  });

  return {
    insertConsoleSession: (session, context) => insert(context, session),
    findConsoleSession: (idHash) => {
      const session = sql.byHash.get(idHash) as ConsoleSessionRecord | undefined;
      const token = session && (sql.liveToken.get(session.apiTokenId) as ApiTokenRow | undefined);
      return session && token ? { session, apiToken: toApiToken(token) } : null;
    },
    touchConsoleSession: (id, lastSeenAt, expiresAt) => {
      sql.touch.run(lastSeenAt, expiresAt, id);
    },
    deleteConsoleSession: (id, context) => remove(context, id),
    purgeConsoleSessions: (expiredBy, limit) => sql.purge.run(expiredBy, limit).changes,
  };
}
