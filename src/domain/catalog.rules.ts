import { creationChanges } from './audit/audit-entry.js';
import { MAX_CATALOGUE_ID } from '../wire/contract.constants.js';
import { failure } from './errors.js';
import type { AuditEntry } from './audit/audit-entry.js';
import type { FieldChanges } from './audit/audit.records.js';
import type { SchemaRecord } from './schemas/schema.records.js';
import type { SigningKeyRecord } from './signing-keys/signing-key.records.js';
import type { Workspace } from './workspaces/workspace.records.js';

/*
 * The audit events of the workspace-wide catalogue: workspaces, schemas, signing keys (each of one
 * environment) and the encryption key. Each is a plain insert (or key swap) whose rules the store's constraints carry;
 * what remains to decide is what the audit trail records.
 */

export function workspaceCreated(workspace: Workspace): AuditEntry {
  return {
    action: 'workspace.created',
    workspaceId: workspace.id,
    environment: null,
    changes: creationChanges({ id: workspace.id, name: workspace.name }),
  };
}

export function schemaCreated(schema: SchemaRecord): AuditEntry {
  return {
    action: 'schema.created',
    workspaceId: schema.workspaceId,
    environment: null,
    changes: creationChanges({ id: schema.id, name: schema.name }),
  };
}

/**
 * An issuer's first signing key, or a rotation to a new one: the kids, never key material; in the
 * key's environment (each has its own keys). A forced rotation also names the keys it dropped.
 */
export function signingKeyChanged(
  current: SigningKeyRecord,
  retired: SigningKeyRecord | null,
  dropped: SigningKeyRecord[] = [],
): AuditEntry {
  if (!retired)
    return {
      action: 'signing_key.created',
      workspaceId: current.workspaceId,
      environment: current.environment,
      changes: creationChanges({ kid: current.kid }),
    };
  const { privateKeyCiphertext: _private, ...signingKey } = current;
  const changes: FieldChanges = { kid: { before: retired.kid, after: current.kid } };
  if (dropped.length > 0) changes.dropped_kids = { before: dropped.map((key) => key.kid), after: [] };
  return {
    action: 'signing_key.rotated',
    workspaceId: current.workspaceId,
    environment: current.environment,
    changes,
    subject: () => ({ kind: 'signing_key', signingKey, retiredKid: retired.kid }),
  };
}

/** A deployment-wide event, recorded in the workspace of the operator who ran it. */
export function encryptionKeyRotated(workspaceId: number, changes: FieldChanges | undefined): AuditEntry {
  return { action: 'encryption_key.rotated', workspaceId, environment: null, changes: changes ?? null };
}

/** A chosen id must be a whole number from 1 to MAX_CATALOGUE_ID (the CLI's input reaches here unchecked by the API schema). */
export function assertCatalogueId(id: number | undefined): void {
  if (id !== undefined && !(Number.isSafeInteger(id) && id >= 1 && id <= MAX_CATALOGUE_ID))
    throw failure.invalidCatalogueId(MAX_CATALOGUE_ID);
}

/** The number a create gets: the chosen one, else the workspace's high-water mark after the bump. */
export function issuedCatalogueNumber(
  chosen: number | undefined,
  highWater: number,
  what: 'schema' | 'data source',
): number {
  if (chosen !== undefined) return chosen;
  if (highWater > MAX_CATALOGUE_ID) throw failure.idsExhausted(what, MAX_CATALOGUE_ID);
  return highWater;
}
