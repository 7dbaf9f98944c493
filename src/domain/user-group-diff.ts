import { isDeepStrictEqual } from 'node:util';
import { mappingToRecord } from './mapping.js';
import type { FieldChanges, UserGroupPatch, UserGroupRecord } from './models.js';

type GroupContent = Pick<UserGroupRecord, 'providedId' | 'name' | 'properties' | 'mapping'>;

/** Audit changes of a group coming into being (`appearing`) or going away. */
export function wholeGroupChanges(group: GroupContent, appearing: boolean): FieldChanges {
  const values = { provided_id: group.providedId, name: group.name, properties: group.properties, mapping: mappingToRecord(group.mapping) };
  return Object.fromEntries(
    Object.entries(values)
      // An absent value (no properties) is not a change.
      .filter(([, value]) => value !== null)
      .map(([field, value]) => [field, appearing ? { before: null, after: value } : { before: value, after: null }]),
  );
}

/** Keeps only the requested fields that differ from the stored group, with before/after for the audit trail. */
export function diffUserGroup(existing: UserGroupRecord, requested: UserGroupPatch): { patch: UserGroupPatch; changes: FieldChanges } {
  const patch: UserGroupPatch = {};
  const changes: FieldChanges = {};
  if (requested.providedId !== undefined && requested.providedId !== existing.providedId) {
    patch.providedId = requested.providedId;
    changes.provided_id = { before: existing.providedId, after: requested.providedId };
  }
  if (requested.name !== undefined && requested.name !== existing.name) {
    patch.name = requested.name;
    changes.name = { before: existing.name, after: requested.name };
  }
  if (requested.properties !== undefined && !isDeepStrictEqual(requested.properties, existing.properties)) {
    patch.properties = requested.properties;
    changes.properties = { before: existing.properties, after: requested.properties };
  }
  if (requested.mapping !== undefined && !isDeepStrictEqual(requested.mapping, existing.mapping)) {
    patch.mapping = requested.mapping;
    changes.mapping = { before: mappingToRecord(existing.mapping), after: mappingToRecord(requested.mapping) };
  }
  if (requested.tokenHash !== undefined && requested.tokenHash !== existing.tokenHash) {
    patch.tokenHash = requested.tokenHash;
    patch.tokenCiphertext = requested.tokenCiphertext;
    // The audit trail records that the token changed, never a token value.
    changes.token = { before: '[redacted]', after: '[redacted]' };
  }
  return { patch, changes };
}
