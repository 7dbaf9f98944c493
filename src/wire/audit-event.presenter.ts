import type { AuditEventRecord } from '../domain/audit/audit.records.js';
import type { Actor } from '../domain/tenancy.js';

function actorOf(actor: Actor) {
  if (actor.type === 'api_token')
    return { type: 'api_token' as const, api_token_id: actor.apiTokenId, name: actor.name };
  if (actor.type === 'person')
    return { type: 'person' as const, issuer: actor.issuer, sub: actor.subject, email: actor.email };
  return { type: 'cli' as const };
}

/** An audit event as the API shows it. */
export const toAuditEvent = (event: AuditEventRecord) => ({
  id: event.id,
  at: event.at,
  environment: event.environment,
  actor: actorOf(event.actor),
  action: event.action,
  team_id: event.teamId,
  provided_id: event.providedId,
  changes: event.changes,
  request_id: event.requestId,
  // Only the changes of a sync carry its id.
  ...(event.syncId === null ? {} : { sync_id: event.syncId }),
});
