import type { WebhookSubject } from '../webhook-endpoints/webhook.records.js';
import type { AuditAction, FieldChanges } from './audit.records.js';
import type { Environment } from '../tenancy.js';

/*
 * What a change writes into the audit trail, as the rules modules (`*.rules.ts`) build it. The
 * engines add who, when and in which request (the AuditContext) and write it in the change's own
 * transaction, whichever engine commits it.
 */

/** The entity a change touched and what changed in it. */
export interface AuditEntry {
  action: AuditAction;
  workspaceId: number;
  environment: Environment | null;
  teamId?: number;
  providedId?: string;
  changes: FieldChanges | null;
  /**
   * The object as the change left it (or, deleted, as it was), for a change that may announce a
   * webhook event. Read only when an endpoint wants the event, inside the change's transaction.
   */
  subject?: () => WebhookSubject;
}

/** A mutation's result together with the audit entries that must commit with it. */
export interface Audited<R> {
  result: R;
  entries: AuditEntry[];
}

/** Audit changes of a newly created entity: every field went from nothing to its value. */
export function creationChanges(fields: Record<string, unknown>): FieldChanges {
  return Object.fromEntries(Object.entries(fields).map(([key, after]) => [key, { before: null, after }]));
}

/** Audit changes of a deleted entity: every field went from its value to nothing. */
export function deletionChanges(fields: Record<string, unknown>): FieldChanges {
  return Object.fromEntries(Object.entries(fields).map(([key, before]) => [key, { before, after: null }]));
}

/** The fields (by audit name) whose values differ between two views of one entity; empty when none do. */
export function changedFields(before: Record<string, unknown>, after: Record<string, unknown>): FieldChanges {
  return Object.fromEntries(
    Object.keys(after)
      .filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]))
      .map((key) => [key, { before: before[key], after: after[key] }]),
  );
}
