import type { Environment } from '../tenancy.js';
import type { AuditEventRecord } from './audit.records.js';

export interface AuditEventQuery {
  workspaceId: number;
  environment?: Environment;
  teamId?: number;
  action?: string;
  /** Only what this person did through the console (identified by issuer and sub, never by email). */
  person?: { issuer: string; subject: string };
  /** Inclusive lower bound on `at`. */
  since?: string;
  /** Exclusive upper bound on `at`. */
  until?: string;
  /** Cursor: only events with a smaller id (the list is newest first). */
  beforeId?: number;
  limit: number;
}

export interface AuditStore {
  listAuditEvents(query: AuditEventQuery): Promise<AuditEventRecord[]>;
}
