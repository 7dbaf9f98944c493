import type { Clock } from '../clock.js';
import type { AuditContext, FieldChanges } from './audit.records.js';
import type { Caller } from '../tenancy.js';

/** What a change records about itself: when, who, under which request, and (for some) which fields. */
export function auditContextOf(
  clock: Clock,
  who: Pick<Caller, 'actor' | 'requestId'>,
  changes?: FieldChanges,
): AuditContext {
  return { at: clock(), actor: who.actor, requestId: who.requestId, ...(changes ? { changes } : {}) };
}
