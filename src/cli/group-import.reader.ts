import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Compile } from 'typebox/compile';
import type { JsonObject } from '../domain/common.records.js';
import type { ImportLine, TransferredUserGroup } from '../domain/user-groups/user-group-transfer.service.js';
import { TransferredUserGroupLine } from '../wire/user-groups.schemas.js';
import { validationError } from '../wire/validation-errors.js';
import { indexSupplement, type Supplement } from '../domain/user-groups/user-group-transfer.rules.js';

// The same schema rules as the API's, compiled once for the whole file.
const lineValidator = Compile(TransferredUserGroupLine);

/**
 * Reads a supplement (JSON Lines of group lines keyed by provided_id, usually only `mapping`,
 * `parent_user_group_id` and `is_demo_group`) whole; a bad line fails the command before anything
 * is written, naming the line.
 */
export async function readSupplement(path: string): Promise<Supplement> {
  const lines: TransferredUserGroup[] = [];
  for await (const item of readGroupLines(path)) {
    if ('error' in item) throw new Error(`${path}, line ${item.line}: ${item.error}`);
    lines.push(item.group);
  }
  return indexSupplement(lines);
}

/** Reads JSON Lines: every non-blank line becomes a group or the reason it is not one. */
export async function* readGroupLines(path: string, onBytes?: (bytesRead: number) => void): AsyncGenerator<ImportLine> {
  const input = path === '-' ? process.stdin : createReadStream(path);
  const lines = createInterface({ input, crlfDelay: Infinity });
  let line = 0;
  let bytes = 0;
  for await (const text of lines) {
    line += 1;
    bytes += Buffer.byteLength(text) + 1;
    onBytes?.(bytes);
    // Editors on some systems start UTF-8 files with a byte-order mark; it is not part of the JSON.
    const content = line === 1 ? text.replace(/^\uFEFF/, '') : text;
    if (content.trim() === '') continue;
    yield parseGroupLine(content, line);
  }
}

export function parseGroupLine(text: string, line: number): ImportLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { line, error: 'not valid JSON' };
  }
  const group = hostedResponseGroup(value);
  if (typeof group === 'string') return { line, error: group };
  if (lineValidator.Check(group))
    return { line, group: group as TransferredUserGroup & { properties?: JsonObject | null } };
  return { line, error: describeFirstError(group) };
}

const RESPONSE_KEYS = new Set(['success', 'new_user_group', 'user_group', 'error']);

/**
 * A line may be a whole response of the hosted product's get-or-create, as `curl` saves it
 * (docs/migrating.md): its `user_group` is the line's group. A failure response is refused with its
 * own message; anything else is the line itself.
 */
function hostedResponseGroup(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (!keys.includes('success') || !keys.every((key) => RESPONSE_KEYS.has(key))) return value;
  const response = value as { success: unknown; user_group?: unknown };
  if (response.success === 1 && response.user_group !== undefined) return response.user_group;
  return 'a response without a user group (success is not 1): the hosted product refused that request';
}

function describeFirstError(value: unknown): string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'a line must be a JSON object';
  // TypeBox lists a root-level problem after the nested "schema is false" entries it causes; report
  // it first, as the API would, and word it as the API does.
  const errors = [...lineValidator.Errors(value)].filter((error) => error.keyword !== 'boolean').map(asAjvError);
  errors.sort((a, b) => Number(b.instancePath === '') - Number(a.instancePath === ''));
  return validationError(errors, 'line', TransferredUserGroupLine).message;
}

/** TypeBox names all missing or extra properties at once; Ajv (whose shape the API's wording reads) names one. */
function asAjvError<E extends { keyword: string; params: object }>(error: E): E {
  const params = error.params as { requiredProperties?: string[]; additionalProperties?: string[] };
  if (error.keyword === 'required') return { ...error, params: { missingProperty: params.requiredProperties?.[0] } };
  if (error.keyword === 'additionalProperties')
    return { ...error, params: { additionalProperty: params.additionalProperties?.[0] } };
  return error;
}
