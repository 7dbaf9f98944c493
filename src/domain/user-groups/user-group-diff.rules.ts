import { isDeepStrictEqual } from 'node:util';
import { mappingToRecord } from './mapping.js';
import type { FieldChanges } from '../audit/audit.records.js';
import type { UserGroupPatch, UserGroupRecord } from './user-group.records.js';

type GroupContent = Pick<
  UserGroupRecord,
  'providedId' | 'name' | 'properties' | 'mapping' | 'parentProvidedId' | 'isDemoGroup' | 'tags' | 'accessRules'
>;

/** Audit changes of a group coming into being (`appearing`) or going away. */
export function wholeGroupChanges(group: GroupContent, appearing: boolean): FieldChanges {
  const values = {
    provided_id: group.providedId,
    name: group.name,
    properties: group.properties,
    mapping: mappingToRecord(group.mapping),
    parent_user_group_id: group.parentProvidedId,
    // The defaults (not a demo group, no tags) are absent values too.
    is_demo_group: group.isDemoGroup || null,
    tags: group.tags.length > 0 ? group.tags : null,
    access_rules: group.accessRules.length > 0 ? group.accessRules : null,
  };
  return Object.fromEntries(
    Object.entries(values)
      // An absent value (no properties, no parent) is not a change.
      .filter(([, value]) => value !== null)
      .map(([field, value]) => [field, appearing ? { before: null, after: value } : { before: value, after: null }]),
  );
}

/** The fields a patch replaces as they are, with the name the audit trail gives each. */
const PLAIN_FIELDS = [
  ['providedId', 'provided_id'],
  ['name', 'name'],
  ['properties', 'properties'],
  ['parentProvidedId', 'parent_user_group_id'],
  ['isDemoGroup', 'is_demo_group'],
  ['tags', 'tags'],
  ['accessRules', 'access_rules'],
] as const;

/** Keeps only the requested fields that differ from the stored group, with before/after for the audit trail. */
export function diffUserGroup(
  existing: UserGroupRecord,
  requested: UserGroupPatch,
): { patch: UserGroupPatch; changes: FieldChanges } {
  const patch: Record<string, unknown> = {};
  const changes: FieldChanges = {};
  for (const [key, auditName] of PLAIN_FIELDS) {
    const value = requested[key];
    if (value !== undefined && !isDeepStrictEqual(value, existing[key])) {
      patch[key] = value;
      changes[auditName] = { before: existing[key], after: value };
    }
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
  return { patch: patch as UserGroupPatch, changes };
}
