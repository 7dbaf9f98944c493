import type { JsonObject } from '../domain/common.records.js';
import type { InputPosition } from '../domain/errors.js';
import { failure } from '../domain/errors.js';
import type { ImportLine, TransferredUserGroup } from '../domain/user-groups/user-group-transfer.service.js';
import { MAX_SYNC_GROUPS, MAX_SYNC_LINE_BYTES } from './contract.constants.js';
import type { JsonItemBounds, JsonItemRefusals } from './json-items.reader.js';
import { requestFailure } from './request-errors.js';
import { MAX_BODY_DEPTH, parseStrictJson } from './strict-json.js';
import { TransferredUserGroupLine } from './user-groups.schemas.js';
import { groupLineValidator } from './group-line.validator.js';

const lineValidator = groupLineValidator(TransferredUserGroupLine);

/** The reason of a line that is not JSON: the CLI's and the HTTP import's alike. */
export const NOT_JSON_REASON = 'not valid JSON';

/**
 * An import's bounds over HTTP, the sync's: at most 10 000 groups a request, each at most the 1 MiB a
 * single group's request body may be, refused at the first group past either.
 */
export const IMPORT_ITEM_BOUNDS: JsonItemBounds = {
  maxItems: MAX_SYNC_GROUPS,
  maxItemBytes: MAX_SYNC_LINE_BYTES,
  tooMany: () => failure.importTooLarge(MAX_SYNC_GROUPS),
};

/**
 * An import file's bounds (`ugs groups import`, its supplement, `verify-import`): each group at most
 * 1 MiB, as over HTTP, and any number of them: the file is read as a stream, never held whole.
 */
export const IMPORT_FILE_ITEM_BOUNDS: JsonItemBounds = { maxItemBytes: MAX_SYNC_LINE_BYTES };

/** What stops the reading of an import file, worded as the reason after "<file>, line N: ". */
export const IMPORT_FILE_REFUSALS: JsonItemRefusals = {
  notJson: requestFailure.fileArrayMalformed,
  notUtf8: requestFailure.fileNotUtf8,
  itemTooLarge: requestFailure.fileItemTooLarge,
};

/** One item of an import's body with where it was: a line (NDJSON, from 1) or an index (array, from 0). */
export type ImportItem = { at: InputPosition; line: ImportLine };

/**
 * One item of an import over HTTP, checked as a line of `ugs groups import` is (the route refuses a
 * line naming another environment than the API token's). The domain counts lines from 1: an
 * array's index i is its line i + 1, shown again as an index.
 */
export function importItemAt(value: unknown, at: InputPosition): ImportItem {
  return { at, line: groupLineOf(value, 'line' in at ? at.line : at.index + 1) };
}

/**
 * An item that is not JSON, or JSON the service refuses (parseStrictJson): refused in the summary
 * with NOT_JSON_REASON, over HTTP as in the CLI.
 */
export const unparsableImportItem = (at: InputPosition): ImportItem => ({
  at,
  line: { line: 'line' in at ? at.line : at.index + 1, error: NOT_JSON_REASON },
});

/**
 * One item of an import file (the CLI's), from its JSON text: parsed as an item over HTTP is
 * (parseStrictJson, so a key twice in one object, a lone surrogate escape, `__proto__` or nesting too
 * deep is refused as over HTTP), then taken as `importItemAt` takes one; text refused is a
 * refused line, as over HTTP.
 */
export function importItemOfText(text: string, at: InputPosition): ImportItem {
  const parsed = parseStrictJson(text, MAX_BODY_DEPTH);
  return parsed.ok ? importItemAt(parsed.value, at) : unparsableImportItem(at);
}

/** One parsed line: a group (the hosted product's whole response unwrapped) or the reason it is not one. */
export function groupLineOf(value: unknown, line: number): ImportLine {
  const unwrapped = hostedResponseGroup(value);
  if ('refusal' in unwrapped) return { line, error: unwrapped.refusal };
  const { group } = unwrapped;
  if (lineValidator.check(group))
    return { line, group: group as TransferredUserGroup & { properties?: JsonObject | null } };
  return { line, error: describeFirstError(group) };
}

const RESPONSE_KEYS = new Set(['success', 'new_user_group', 'user_group', 'error']);

/**
 * A line may be a whole response of the hosted product's get-or-create, as `curl` saves it
 * (docs/migrating.md): its `user_group` is the line's group. A failure response is refused with its
 * own message; anything else is the line itself.
 */
function hostedResponseGroup(value: unknown): { group: unknown } | { refusal: string } {
  // Tagged, not a bare string: a line that is a JSON string is a line to refuse, never a reason to echo.
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { group: value };
  const keys = Object.keys(value);
  if (!keys.includes('success') || !keys.every((key) => RESPONSE_KEYS.has(key))) return { group: value };
  const response = value as { success: unknown; user_group?: unknown };
  if (response.success === 1 && response.user_group !== undefined) return { group: response.user_group };
  return { refusal: 'a response without a user group (success is not 1): the hosted product refused that request' };
}

function describeFirstError(value: unknown): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'a line must be a JSON object';
  return lineValidator.firstError(value).message;
}
