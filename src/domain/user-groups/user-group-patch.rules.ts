import type { JsonObject } from '../common.records.js';
import type { UserGroupPatch } from './user-group.records.js';

/*
 * Which columns a PUT of a user group changes (the rule once, not per engine). Each engine
 * keeps one UPDATE statement for every shape of patch (`col = CASE WHEN @setCol THEN @col ELSE col
 * END`, src/store/user-group-records.ts `patchParameters`) and encodes the values in its own types;
 * what goes into that statement, and whether the merged-size rule must look at the write, is here.
 */

/**
 * The patch keys the update statement writes as columns; the mapping lives in its own table, and the
 * parent link is written by team id once the engine has checked it (`parentTeamId`).
 */
export const PATCHABLE_GROUP_COLUMNS = [
  'providedId',
  'name',
  'properties',
  'isDemoGroup',
  'tags',
  'accessRules',
  'tokenHash',
  'tokenCiphertext',
  'parentTeamId',
] as const;

/**
 * A write that can change merged properties: a create under a parent (no team id), or an update that
 * sets properties (undefined: unchanged) and/or links the group to another parent (`parentTeamId`:
 * null detaches, undefined keeps the link).
 */
export interface MergedSizeWrite {
  teamId?: number;
  providedId?: string;
  properties?: JsonObject | null;
  /** How many access rules the group will own (undefined: unchanged). */
  accessRules?: number;
  parentTeamId?: number | null;
}

/**
 * What an update writes that the merged-size rule looks at, once the engine has checked its link
 * (`parentTeamId`); undefined when the update cannot grow any group's merged properties (it sets no
 * properties and links to no new parent), so that the engine reads nothing.
 */
export function mergedSizeWriteOfUpdate(
  teamId: number,
  patch: UserGroupPatch,
  parentTeamId: number | null | undefined,
): MergedSizeWrite | undefined {
  if (
    patch.properties === undefined &&
    patch.accessRules === undefined &&
    (parentTeamId === undefined || parentTeamId === null)
  )
    return undefined;
  return {
    teamId,
    ...(patch.providedId === undefined ? {} : { providedId: patch.providedId }),
    ...(patch.properties === undefined ? {} : { properties: patch.properties }),
    ...(patch.accessRules === undefined ? {} : { accessRules: patch.accessRules.length }),
    ...(parentTeamId === undefined ? {} : { parentTeamId }),
  };
}

/** A token swap replaces hash and ciphertext together; one without the other would orphan the token. */
export function assertTokenPatchComplete(patch: { tokenHash?: string; tokenCiphertext?: string }): void {
  if ((patch.tokenHash === undefined) !== (patch.tokenCiphertext === undefined)) {
    throw new Error('a user group patch sets tokenHash and tokenCiphertext together or neither');
  }
}
