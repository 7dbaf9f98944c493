import type { AuditEventRecord } from './audit.records.js';
import { fetchPage, type Page } from '../pagination.js';
import { requireScope } from '../api-tokens/scopes.js';
import type { Caller } from '../tenancy.js';
import type { AuditEventQuery, AuditStore } from './audit.port.js';

export type AuditEventFilter = Omit<AuditEventQuery, 'workspaceId'>;

export type AuditService = ReturnType<typeof createAuditService>;

export function createAuditService({ store }: { store: AuditStore }) {
  return {
    /** Newest first, across the caller's workspace (both environments unless the filter picks one). */
    async listAuditEvents(caller: Caller, filter: AuditEventFilter): Promise<Page<AuditEventRecord>> {
      requireScope(caller, 'admin');
      return fetchPage(
        filter.limit,
        (limit) => store.listAuditEvents({ ...filter, workspaceId: caller.tenant.workspaceId, limit }),
        (event) => event.id,
        (event) => event,
      );
    },
  };
}
