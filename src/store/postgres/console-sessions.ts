import { consoleSessionEnded, consoleSessionStarted } from '../../domain/console-sessions/console-sessions.rules.js';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type { ConsoleSessionRecord, NewConsoleSession } from '../../domain/console-sessions/console-session.records.js';
import type { Environment } from '../../domain/tenancy.js';
import type { ConsoleSessionStore } from '../../domain/console-sessions/console-sessions.port.js';
import { API_TOKEN_COLUMNS, toApiToken, type ApiTokenRow } from './api-tokens.js';
import type { AuditEvents } from './audit-events.js';
import type { PostgresDatabase } from './postgres-database.js';
import { iso, onlyRow, toNumber, type Int8 } from './rows.js';
import { statements } from './statements.js';

interface ConsoleSessionRow {
  session_id: Int8;
  api_token_id: Int8;
  session_created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
}

const toSession = (row: ConsoleSessionRow): ConsoleSessionRecord => ({
  id: toNumber(row.session_id),
  apiTokenId: toNumber(row.api_token_id),
  createdAt: iso(row.session_created_at),
  lastSeenAt: iso(row.last_seen_at),
  expiresAt: iso(row.expires_at),
});

const COLUMNS = 'id AS session_id, api_token_id, created_at AS session_created_at, last_seen_at, expires_at';
const TOKEN_COLUMNS = API_TOKEN_COLUMNS.split(', ')
  .map((column) => `t.${column}`)
  .join(', ');

const sql = statements(
  {
    insert: `INSERT INTO console_sessions (id_hash, api_token_id, created_at, last_seen_at, expires_at)
    VALUES (@idHash, @apiTokenId, @createdAt, @createdAt, @expiresAt) RETURNING ${COLUMNS}`,
    // One round trip: the session and its token, found only while the token is live.
    byHash: `SELECT s.id AS session_id, s.api_token_id, s.created_at AS session_created_at, s.last_seen_at, s.expires_at, ${TOKEN_COLUMNS}
    FROM console_sessions s JOIN api_tokens t ON t.id = s.api_token_id
    WHERE s.id_hash = @idHash AND t.revoked_at IS NULL`,
    deleteReturningTenant: `DELETE FROM console_sessions s USING api_tokens t
    WHERE s.id = @id AND t.id = s.api_token_id RETURNING t.workspace_id, t.environment`,
    touch: 'UPDATE console_sessions SET last_seen_at = @lastSeenAt, expires_at = @expiresAt WHERE id = @id',
    purge: `DELETE FROM console_sessions WHERE id IN
    (SELECT id FROM console_sessions WHERE expires_at <= @expiredBy::timestamptz LIMIT @limit) RETURNING 1`,
  },
  { prepared: true },
);

export function consoleSessionMethods(db: PostgresDatabase, audit: AuditEvents): ConsoleSessionStore {
  const insert = audit.withAudit(async (tx, _context: AuditContext, session: NewConsoleSession) => {
    const { idHash, apiToken, createdAt, expiresAt } = session;
    const record = toSession(
      onlyRow(
        await tx.rows<ConsoleSessionRow>(sql.insert({ idHash, apiTokenId: apiToken.id, createdAt, expiresAt })),
        'console session insert',
      ),
    );
    const tenant = { sessionId: record.id, workspaceId: apiToken.workspaceId, environment: apiToken.environment };
    return { result: record, entries: [consoleSessionStarted(tenant)] };
  });

  const remove = audit.withAudit(async (tx, _context: AuditContext, id: number) => {
    const [row] = await tx.rows<{ workspace_id: Int8; environment: Environment }>(sql.deleteReturningTenant({ id }));
    if (!row) return { result: false, entries: [] };
    return {
      result: true,
      entries: [
        consoleSessionEnded({ sessionId: id, workspaceId: toNumber(row.workspace_id), environment: row.environment }),
      ],
    };
  });

  return {
    insertConsoleSession: (session, context) => insert(context, session),
    findConsoleSession: async (idHash) => {
      const [row] = await db.rows<ConsoleSessionRow & ApiTokenRow>(sql.byHash({ idHash }));
      return row ? { session: toSession(row), apiToken: toApiToken(row) } : null;
    },
    touchConsoleSession: async (id, lastSeenAt, expiresAt) => {
      await db.rows(sql.touch({ id, lastSeenAt, expiresAt }));
    },
    deleteConsoleSession: (id, context) => remove(context, id),
    purgeConsoleSessions: async (expiredBy, limit) => (await db.rows(sql.purge({ expiredBy, limit }))).length,
  };
}
