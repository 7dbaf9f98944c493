import { isDeepStrictEqual } from 'node:util';
import type { Environment } from '../tenancy.js';
import type { MappingEntry, UserGroupRecord } from './user-group.records.js';
import type { TransferredUserGroup } from './user-group-transfer.service.js';
import { CARRIED_FIELDS } from '../../wire/contract.constants.js';

/*
 * What an import learns about each line beyond writing it: which fields the line lacked (so a move
 * never loses one silently), what a supplement adds, and, after the move, how an imported group
 * differs from its line. Pure functions; the transfer service reads and writes.
 */

// The list is part of the contract the wire schemas state: defined there, once.
export { CARRIED_FIELDS };
export type CarriedField = (typeof CARRIED_FIELDS)[number];

export const isCarriedField = (name: string): name is CarriedField =>
  (CARRIED_FIELDS as readonly string[]).includes(name);

/**
 * A comma-separated list of carried fields (`--require-fields`, `require_fields`), checked so that a
 * typo is an error rather than a requirement that never applies: the fields, or the sentence saying why not.
 */
export function parseCarriedFields(value: string): { fields: CarriedField[] } | { error: string } {
  const names = value.split(',').map((field) => field.trim());
  const unknown = names.filter((field) => !isCarriedField(field));
  if (unknown.length > 0)
    return {
      error: `Unknown field ${unknown.join(', ')}; give some of ${CARRIED_FIELDS.join(', ')}, comma-separated.`,
    };
  return { fields: names.filter(isCarriedField) };
}

/** The carried fields a line does not have (as opposed to has as null, which clears). */
export const lackedFields = (group: TransferredUserGroup): CarriedField[] =>
  CARRIED_FIELDS.filter((field) => group[field] === undefined);

/** Supplement lines by provided id; a line with an environment tag applies to that environment only. */
export type Supplement = ReadonlyMap<string, TransferredUserGroup>;

const supplementKey = (environment: Environment | '*', providedId: string) => `${environment}\u0000${providedId}`;

/** Indexes supplement lines; a later line for the same key replaces an earlier one. */
export function indexSupplement(lines: Iterable<TransferredUserGroup>): Supplement {
  const index = new Map<string, TransferredUserGroup>();
  for (const line of lines) index.set(supplementKey(line.api_environment_tag ?? '*', String(line.provided_id)), line);
  return index;
}

/**
 * The line with every field it lacks taken from its supplement line (its environment's first, then
 * one without a tag). A field the line has is never overridden: the export stays authoritative.
 */
export function supplemented(
  group: TransferredUserGroup,
  environment: Environment,
  supplement: Supplement | undefined,
): TransferredUserGroup {
  if (!supplement) return group;
  const providedId = String(group.provided_id);
  const extra =
    supplement.get(supplementKey(environment, providedId)) ?? supplement.get(supplementKey('*', providedId));
  if (!extra) return group;
  const filled: Record<string, unknown> = { ...group };
  for (const [field, value] of Object.entries(extra))
    if (filled[field] === undefined && field !== 'api_environment_tag' && field !== 'provided_id')
      filled[field] = value;
  return filled as unknown as TransferredUserGroup;
}

/** One field of an imported group that differs from its line; never a token's value. */
export interface FieldDifference {
  field: 'token' | 'team_id' | 'name' | 'properties' | 'mapping' | 'parent_user_group_id' | 'is_demo_group';
  expected?: unknown;
  actual?: unknown;
}

/**
 * How the group differs from the line that imported it, over the fields the line carries. `mapping`
 * is the line's mapping resolved in the group's tenant (undefined when the line has none), or the
 * reason it does not resolve; `tokenVerifies` whether the line's token, if any, is the group's.
 */
export function importDifferences(
  line: TransferredUserGroup,
  group: UserGroupRecord,
  mapping: MappingEntry[] | { unresolved: string } | undefined,
  tokenVerifies: boolean | undefined,
  wireMapping: (entries: MappingEntry[]) => Record<string, string>,
): FieldDifference[] {
  const differences: FieldDifference[] = [];
  const differ = (field: FieldDifference['field'], expected: unknown, actual: unknown) => {
    if (!isDeepStrictEqual(expected, actual)) differences.push({ field, expected, actual });
  };
  if (tokenVerifies === false) differences.push({ field: 'token' });
  if (line.team_id !== undefined) differ('team_id', line.team_id, group.teamId);
  if (line.name !== undefined) differ('name', line.name, group.name);
  if (line.properties !== undefined) differ('properties', line.properties ?? null, group.properties);
  if (mapping !== undefined) {
    if ('unresolved' in mapping)
      differences.push({ field: 'mapping', expected: line.mapping, actual: wireMapping(group.mapping) });
    else differ('mapping', wireMapping(mapping), wireMapping(group.mapping));
  }
  if (line.parent_user_group_id !== undefined)
    differ(
      'parent_user_group_id',
      line.parent_user_group_id === null ? null : String(line.parent_user_group_id),
      group.parentProvidedId,
    );
  if (line.is_demo_group !== undefined) differ('is_demo_group', line.is_demo_group, group.isDemoGroup);
  return differences;
}
