import type { Database } from 'better-sqlite3';
import type { AuditContext } from '../../domain/audit/audit.records.js';
import type { AuditEntry } from '../../domain/audit/audit-entry.js';
import type { OidcSessionStore } from '../../domain/console-sessions/oidc-sessions.port.js';
import type {
  NewPersonSession,
  OidcFlowRecord,
  PersonSessionRecord,
} from '../../domain/console-sessions/oidc-session.records.js';
import type { Environment } from '../../domain/tenancy.js';
import type { AuditEvents } from './audit-events.js';
import type { Synchronous } from './busy-retry.js';
import { preparedOnFirstUse } from './prepared.js';

interface PersonSessionRow {
  id: number;
  issuer: string;
  subject: string;
  email: string | null;
  access: string;
  workspace_id: number;
  environment: Environment;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  renew_at: string;
}

const toPersonSession = (row: PersonSessionRow): PersonSessionRecord => ({
  id: row.id,
  person: { issuer: row.issuer, subject: row.subject, email: row.email },
  access: JSON.parse(row.access) as PersonSessionRecord['access'],
  workspaceId: row.workspace_id,
  environment: row.environment,
  createdAt: row.created_at,
  lastSeenAt: row.last_seen_at,
  expiresAt: row.expires_at,
  renewAt: row.renew_at,
});

const COLUMNS =
  'id, issuer, subject, email, access, workspace_id, environment, created_at, last_seen_at, expires_at, renew_at';

export function oidcSessionMethods(db: Database, audit: AuditEvents): Synchronous<OidcSessionStore> {
  const sql = preparedOnFirstUse(db, {
    purgeFlows: `DELETE FROM oidc_flows WHERE state_hash IN
      (SELECT state_hash FROM oidc_flows WHERE expires_at <= ? LIMIT ?)`,
    insertFlow: `INSERT INTO oidc_flows (state_hash, browser_hash, return_to, created_at, expires_at)
      VALUES (@stateHash, @browserHash, @returnTo, @createdAt, @expiresAt)`,
    takeFlow: `DELETE FROM oidc_flows WHERE state_hash = ? RETURNING state_hash AS stateHash,
      browser_hash AS browserHash, return_to AS returnTo, created_at AS createdAt, expires_at AS expiresAt`,
    insert: `INSERT INTO person_sessions
      (id_hash, issuer, subject, email, access, workspace_id, environment, created_at, last_seen_at, expires_at, renew_at)
      VALUES (@idHash, @issuer, @subject, @email, @access, @workspaceId, @environment, @createdAt, @createdAt, @expiresAt, @renewAt)
      RETURNING ${COLUMNS}`,
    byHash: `SELECT ${COLUMNS} FROM person_sessions WHERE id_hash = ?`,
    touch: 'UPDATE person_sessions SET last_seen_at = ?, expires_at = ? WHERE id = ?',
    delete: 'DELETE FROM person_sessions WHERE id = ?',
    list: `SELECT ${COLUMNS} FROM person_sessions WHERE workspace_id = @workspaceId
      AND (@subject IS NULL OR (issuer = @issuer AND subject = @subject)) ORDER BY id DESC LIMIT 1000`,
    byId: `SELECT ${COLUMNS} FROM person_sessions WHERE workspace_id = ? AND id = ?`,
    purge: 'DELETE FROM person_sessions WHERE id IN (SELECT id FROM person_sessions WHERE expires_at <= ? LIMIT ?)',
  });

  const insertFlow = db.transaction((flow: OidcFlowRecord, purgeLimit: number) => {
    sql.purgeFlows.run(flow.createdAt, purgeLimit);
    sql.insertFlow.run(flow);
  });

  const insert = audit.withAudit(
    (_context: AuditContext, session: NewPersonSession, entry: (sessionId: number) => AuditEntry) => {
      const { person, access, ...rest } = session;
      const record = toPersonSession(
        sql.insert.get({ ...rest, ...person, access: JSON.stringify(access) }) as PersonSessionRow,
      );
      return { result: record, entries: [entry(record.id)] };
    },
  );

  const remove = audit.withAudit((_context: AuditContext, id: number, entry: AuditEntry) => {
    const gone = sql.delete.run(id).changes === 1;
    return { result: gone, entries: gone ? [entry] : [] };
  });

  const record = audit.withAudit((_context: AuditContext, entry: AuditEntry) => ({
    result: undefined,
    entries: [entry],
  }));

  return {
    insertOidcFlow: (flow, purgeLimit) => insertFlow.immediate(flow, purgeLimit),
    takeOidcFlow: (stateHash) => (sql.takeFlow.get(stateHash) as OidcFlowRecord | undefined) ?? null,
    insertPersonSession: (session, context, entry) => insert(context, session, entry),
    findPersonSession: (idHash) => {
      const row = sql.byHash.get(idHash) as PersonSessionRow | undefined;
      return row ? toPersonSession(row) : null;
    },
    touchPersonSession: (id, lastSeenAt, expiresAt) => {
      sql.touch.run(lastSeenAt, expiresAt, id);
    },
    deletePersonSession: (id, context, entry) => remove(context, id, entry),
    listPersonSessions: (workspaceId, person) =>
      (
        sql.list.all({
          workspaceId,
          issuer: person?.issuer ?? null,
          subject: person?.subject ?? null,
        }) as PersonSessionRow[]
      ).map(toPersonSession),
    findPersonSessionById: (workspaceId, id) => {
      const row = sql.byId.get(workspaceId, id) as PersonSessionRow | undefined;
      return row ? toPersonSession(row) : null;
    },
    recordAuditEntry: (context, entry) => record(context, entry),
    purgePersonSessions: (expiredBy, limit) => sql.purge.run(expiredBy, limit).changes,
  };
}
