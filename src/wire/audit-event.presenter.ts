import type { AuditEventRecord } from '../domain/audit/audit.records.js';

/** An audit event as the API shows it. */
export const toAuditEvent = (event: AuditEventRecord) => ({
  id: event.id,
  at: event.at,
  environment: event.environment,
  actor:
    event.actor.type === 'api_token'
      ? { type: 'api_token' as const, api_token_id: event.actor.apiTokenId, name: event.actor.name }
      : { type: 'cli' as const },
  action: event.action,
  team_id: event.teamId,
  provided_id: event.providedId,
  changes: event.changes,
  request_id: event.requestId,
  // Only the changes of a sync carry its id.
  ...(event.syncId === null ? {} : { sync_id: event.syncId }),
});
