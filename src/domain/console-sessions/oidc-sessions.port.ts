import type { AuditContext } from '../audit/audit.records.js';
import type { AuditEntry } from '../audit/audit-entry.js';
import type { NewPersonSession, OidcFlowRecord, PersonSessionRecord } from './oidc-session.records.js';

/**
 * Sign-ins through the identity provider and the console sessions of people, in the database so that
 * every worker and instance knows them (a flow started on one finishes on another).
 */
export interface OidcSessionStore {
  /** Writes a flow, first deleting at most `purgeLimit` flows expired by its `createdAt`. */
  insertOidcFlow(flow: OidcFlowRecord, purgeLimit: number): Promise<void>;
  /** Deletes the flow with that state hash and returns it: a state is used once, whoever comes first. */
  takeOidcFlow(stateHash: string): Promise<OidcFlowRecord | null>;
  /** Writes the session with its audit entry (`console_session.created`), in one transaction. */
  insertPersonSession(
    session: NewPersonSession,
    audit: AuditContext,
    entry: (sessionId: number) => AuditEntry,
  ): Promise<PersonSessionRecord>;
  findPersonSession(idHash: string): Promise<PersonSessionRecord | null>;
  /** Records a use; bookkeeping, not a change: no audit event. */
  touchPersonSession(id: number, lastSeenAt: string, expiresAt: string): Promise<void>;
  /** Deletes the session with its audit entry; false when it was gone already. */
  deletePersonSession(id: number, audit: AuditContext, entry: AuditEntry): Promise<boolean>;
  /** The live and expired sessions acting in a workspace, newest first, optionally of one person only. */
  listPersonSessions(
    workspaceId: number,
    person: { issuer: string; subject: string } | undefined,
  ): Promise<PersonSessionRecord[]>;
  /** One session acting in a workspace, by its id; null when there is none (or it acts in another). */
  findPersonSessionById(workspaceId: number, id: number): Promise<PersonSessionRecord | null>;
  /** Writes an audit entry that changes nothing else (a refused sign-in). */
  recordAuditEntry(audit: AuditContext, entry: AuditEntry): Promise<void>;
  purgePersonSessions(expiredBy: string, limit: number): Promise<number>;
}
