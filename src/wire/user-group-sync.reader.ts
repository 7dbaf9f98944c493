import { atPosition, failure, type InputPosition } from '../domain/errors.js';
import type { JsonObject } from '../domain/common.records.js';
import type { SyncLineInput } from '../domain/user-group-sync/user-group-sync.service.js';
import { MAX_SYNC_GROUPS, MAX_SYNC_LINE_BYTES } from './contract.constants.js';
import { JsonItemsSplitter, type JsonItemBounds, type JsonItemRefusals } from './json-items.reader.js';
import { SyncUserGroupLine } from './user-group-sync.schemas.js';
import { groupLineValidator } from './group-line.validator.js';
import { requestFailure } from './request-errors.js';
import { jsonDefectError, MAX_BODY_DEPTH, parseStrictJson } from './strict-json.js';

const lineValidator = groupLineValidator(SyncUserGroupLine);

export type SyncFileLine = { at: InputPosition; group: SyncLineInput };

/**
 * A sync's bounds (docs/api.md#sync-tenants-as-code): at most MAX_SYNC_GROUPS groups, each at most the 1 MiB a single
 * group's request body may be, so a body is refused at the first group past either.
 */
export const SYNC_ITEM_BOUNDS: JsonItemBounds = {
  maxItems: MAX_SYNC_GROUPS,
  maxItemBytes: MAX_SYNC_LINE_BYTES,
  tooMany: () => failure.syncTooLarge(MAX_SYNC_GROUPS),
};

/**
 * What stops the reading of a sync file (`ugs groups sync`'s): worded for a file, as its other
 * refusals are ("Line N: The text …").
 */
const SYNC_FILE_REFUSALS: JsonItemRefusals = {
  notJson: requestFailure.textNotJson,
  notUtf8: requestFailure.textNotUtf8,
  itemTooLarge: requestFailure.textItemTooLarge,
};

/**
 * A sync's desired state (docs/api.md#sync-tenants-as-code), `ugs groups sync`'s file, as bytes: a JSON
 * array of group objects (positions are indexes, from 0), or NDJSON, one object per line (positions
 * are line numbers, from 1; blank lines skipped). Each group is parsed as the API's streamed body
 * parses it (parseStrictJson: a key twice in one object, a lone surrogate escape, `__proto__` or
 * nesting too deep is refused) and checked as the single operations' request schemas check theirs;
 * the first refusal names its line or index, worded for a file ("The text …"). The same splitter
 * reads the API's streamed body (JsonItemsSplitter), and decodes each item strictly: invalid UTF-8
 * is refused naming its line or index, never read as U+FFFD.
 */
export function readSyncFile(input: Buffer): SyncFileLine[] {
  const lines: SyncFileLine[] = [];
  const splitter = new JsonItemsSplitter(
    SYNC_ITEM_BOUNDS,
    (json, at) => {
      const parsed = parseStrictJson(json, MAX_BODY_DEPTH);
      if (!parsed.ok) throw atPosition(jsonDefectError(parsed.defect, 'text'), at);
      lines.push(syncLineAt(parsed.value, at));
    },
    SYNC_FILE_REFUSALS,
  );
  splitter.push(input);
  splitter.end();
  return lines;
}

/** One group of the desired state, as the domain takes it; refused, naming its position, unless it is a valid group object. */
export function syncLineAt(value: unknown, at: InputPosition): SyncFileLine {
  return { at, group: syncLineOf(value, at) };
}

function syncLineOf(value: unknown, at: InputPosition): SyncLineInput {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw atPosition(requestFailure.groupNotObject(), at);
  if (!lineValidator.check(value)) throw atPosition(lineValidator.firstError(value), at);
  const line = value;
  return {
    userGroupId: line.user_group_id,
    ...(line.name !== undefined ? { name: line.name } : {}),
    ...(line.parent_user_group_id !== undefined ? { parentUserGroupId: line.parent_user_group_id } : {}),
    ...(line.properties !== undefined ? { properties: line.properties as JsonObject | null } : {}),
    ...(line.mapping !== undefined ? { mapping: line.mapping } : {}),
    ...(line.tags !== undefined ? { tags: line.tags } : {}),
    ...(line.is_demo_group !== undefined ? { isDemoGroup: line.is_demo_group } : {}),
    ...(line.access_rules !== undefined ? { accessRules: line.access_rules } : {}),
  };
}
