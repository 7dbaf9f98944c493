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
import type { PostgresDatabase } from './postgres-database.js';
import { iso, onlyRow, toNumber, type Int8 } from './rows.js';
import { statements } from './statements.js';

interface PersonSessionRow {
  id: Int8;
  issuer: string;
  subject: string;
  email: string | null;
  access: PersonSessionRecord['access'];
  workspace_id: Int8;
  environment: Environment;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  renew_at: Date;
}

const toPersonSession = (row: PersonSessionRow): PersonSessionRecord => ({
  id: toNumber(row.id),
  person: { issuer: row.issuer, subject: row.subject, email: row.email },
  access: row.access,
  workspaceId: toNumber(row.workspace_id),
  environment: row.environment,
  createdAt: iso(row.created_at),
  lastSeenAt: iso(row.last_seen_at),
  expiresAt: iso(row.expires_at),
  renewAt: iso(row.renew_at),
});

interface FlowRow {
  state_hash: string;
  browser_hash: string;
  return_to: string;
  created_at: Date;
  expires_at: Date;
}

const COLUMNS =
  'id, issuer, subject, email, access, workspace_id, environment, created_at, last_seen_at, expires_at, renew_at';

const sql = statements(
  {
    purgeFlows: `DELETE FROM oidc_flows WHERE state_hash IN
    (SELECT state_hash FROM oidc_flows WHERE expires_at <= @expiredBy::timestamptz LIMIT @limit)`,
    insertFlow: `INSERT INTO oidc_flows (state_hash, browser_hash, return_to, created_at, expires_at)
    VALUES (@stateHash, @browserHash, @returnTo, @createdAt, @expiresAt)`,
    takeFlow: `DELETE FROM oidc_flows WHERE state_hash = @stateHash
    RETURNING state_hash, browser_hash, return_to, created_at, expires_at`,
    insert: `INSERT INTO person_sessions
    (id_hash, issuer, subject, email, access, workspace_id, environment, created_at, last_seen_at, expires_at, renew_at)
    VALUES (@idHash, @issuer, @subject, @email, @access::jsonb, @workspaceId, @environment, @createdAt, @createdAt, @expiresAt, @renewAt)
    RETURNING ${COLUMNS}`,
    byHash: `SELECT ${COLUMNS} FROM person_sessions WHERE id_hash = @idHash`,
    touch: 'UPDATE person_sessions SET last_seen_at = @lastSeenAt, expires_at = @expiresAt WHERE id = @id',
    delete: 'DELETE FROM person_sessions WHERE id = @id RETURNING 1',
    list: `SELECT ${COLUMNS} FROM person_sessions WHERE workspace_id = @workspaceId
    AND (@subject::text IS NULL OR (issuer = @issuer::text AND subject = @subject::text)) ORDER BY id DESC LIMIT 1000`,
    byId: `SELECT ${COLUMNS} FROM person_sessions WHERE workspace_id = @workspaceId AND id = @id`,
    purge: `DELETE FROM person_sessions WHERE id IN
    (SELECT id FROM person_sessions WHERE expires_at <= @expiredBy::timestamptz LIMIT @limit) RETURNING 1`,
  },
  { prepared: true },
);

export function oidcSessionMethods(db: PostgresDatabase, audit: AuditEvents): OidcSessionStore {
  const insert = audit.withAudit(
    async (tx, _context: AuditContext, session: NewPersonSession, entry: (sessionId: number) => AuditEntry) => {
      const { person, access, ...rest } = session;
      const record = toPersonSession(
        onlyRow(
          await tx.rows<PersonSessionRow>(sql.insert({ ...rest, ...person, access: JSON.stringify(access) })),
          'person session insert',
        ),
      );
      return { result: record, entries: [entry(record.id)] };
    },
  );

  const remove = audit.withAudit(async (tx, _context: AuditContext, id: number, entry: AuditEntry) => {
    const gone = (await tx.rows(sql.delete({ id }))).length === 1;
    return { result: gone, entries: gone ? [entry] : [] };
  });

  const record = audit.withAudit(async (_tx, _context: AuditContext, entry: AuditEntry) => ({
    result: undefined,
    entries: [entry],
  }));

  return {
    insertOidcFlow: async (flow: OidcFlowRecord, limit) => {
      await db.transaction(async (tx) => {
        await tx.rows(sql.purgeFlows({ expiredBy: flow.createdAt, limit }));
        await tx.rows(sql.insertFlow({ ...flow }));
      });
    },
    takeOidcFlow: async (stateHash) => {
      const [row] = await db.rows<FlowRow>(sql.takeFlow({ stateHash }));
      return row
        ? {
            stateHash: row.state_hash,
            browserHash: row.browser_hash,
            returnTo: row.return_to,
            createdAt: iso(row.created_at),
            expiresAt: iso(row.expires_at),
          }
        : null;
    },
    insertPersonSession: (session, context, entry) => insert(context, session, entry),
    findPersonSession: async (idHash) => {
      const [row] = await db.rows<PersonSessionRow>(sql.byHash({ idHash }));
      return row ? toPersonSession(row) : null;
    },
    touchPersonSession: async (id, lastSeenAt, expiresAt) => {
      await db.rows(sql.touch({ id, lastSeenAt, expiresAt }));
    },
    deletePersonSession: (id, context, entry) => remove(context, id, entry),
    listPersonSessions: async (workspaceId, person) =>
      (
        await db.rows<PersonSessionRow>(
          sql.list({ workspaceId, issuer: person?.issuer ?? null, subject: person?.subject ?? null }),
        )
      ).map(toPersonSession),
    findPersonSessionById: async (workspaceId, id) => {
      const [row] = await db.rows<PersonSessionRow>(sql.byId({ workspaceId, id }));
      return row ? toPersonSession(row) : null;
    },
    recordAuditEntry: (context, entry) => record(context, entry),
    purgePersonSessions: async (expiredBy, limit) => (await db.rows(sql.purge({ expiredBy, limit }))).length,
  };
}
