import { Compile } from 'typebox/compile';
import { atPosition, AppError, failure, type InputPosition } from '../domain/errors.js';
import type { JsonObject } from '../domain/common.records.js';
import type { SyncLineInput } from '../domain/user-group-sync/user-group-sync.service.js';
import { MAX_SYNC_GROUPS } from './contract.constants.js';
import { SyncUserGroupLine } from './user-group-sync.schemas.js';
import { validationError } from './validation-errors.js';

// The same rules as the API's request schemas, compiled once.
// Compiled on first use: compiling costs some 200 ms, which every `ugs` command and server start would
// otherwise pay whether or not it syncs.
const compileLineValidator = () => Compile(SyncUserGroupLine);
let compiledLineValidator: ReturnType<typeof compileLineValidator> | undefined;
const lineValidator = () => (compiledLineValidator ??= compileLineValidator());

/** Parses one JSON text, or throws the AppError saying what is wrong with it (the HTTP layer's strict parser, or the CLI's). */
export type JsonTextParser = (text: string, nested: boolean) => unknown;

export type SyncFileLine = { at: InputPosition; group: SyncLineInput };

/**
 * A sync's desired state (SPEC §16) as text: a JSON array of group objects (positions are indexes,
 * from 0), or NDJSON, one object per line (positions are line numbers, from 1; blank lines skipped).
 * Each group is checked as the single operations' request schemas check theirs; the first refusal
 * names its line or index.
 */
export function readSyncFile(text: string, parse: JsonTextParser): SyncFileLine[] {
  const content = text.replace(/^\uFEFF/, '');
  const items: Array<{ at: InputPosition; value: unknown }> = [];
  if (content.trimStart().startsWith('[')) {
    const array = parse(content, true);
    if (!Array.isArray(array)) throw notGroups();
    array.forEach((value, index) => items.push({ at: { index }, value }));
  } else {
    const lines = content.split('\n');
    for (let number = 1; number <= lines.length; number += 1) {
      const line = lines[number - 1]!.replace(/\r$/, '');
      if (line.trim() === '') continue;
      if (items.length >= MAX_SYNC_GROUPS) throw tooMany();
      items.push({ at: { line: number }, value: parseAt(parse, line, { line: number }) });
    }
  }
  if (items.length > MAX_SYNC_GROUPS) throw tooMany();
  return items.map(({ at, value }) => ({ at, group: syncLineOf(value, at) }));
}

function parseAt(parse: JsonTextParser, text: string, at: InputPosition): unknown {
  try {
    return parse(text, false);
  } catch (error) {
    throw error instanceof AppError ? atPosition(error, at) : error;
  }
}

/** One group of a sync, checked as the API's request schemas check theirs; a refusal names `at`. */
export function syncLineOf(value: unknown, at: InputPosition): SyncLineInput {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw atPosition(new AppError('invalid_json', 'Each group must be a JSON object.'), at);
  if (!lineValidator().Check(value)) throw atPosition(describeFirstError(value), at);
  const line = value as SyncUserGroupLine;
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

const notGroups = () =>
  new AppError('invalid_json', 'The body must be a JSON array of user groups, or NDJSON (one group per line).');
const tooMany = () => failure.syncTooLarge(MAX_SYNC_GROUPS);

/** Worded as the API words a refusal of its request schema; TypeBox lists every missing or extra key, Ajv one. */
function describeFirstError(value: unknown): AppError {
  const errors = [...lineValidator().Errors(value)]
    .filter((error) => error.keyword !== 'boolean')
    .map((error) => {
      const params = error.params as { requiredProperties?: string[]; additionalProperties?: string[] };
      if (error.keyword === 'required')
        return { ...error, params: { missingProperty: params.requiredProperties?.[0] } };
      if (error.keyword === 'additionalProperties')
        return { ...error, params: { additionalProperty: params.additionalProperties?.[0] } };
      return error;
    });
  errors.sort((a, b) => Number(b.instancePath === '') - Number(a.instancePath === ''));
  return validationError(errors, 'line', SyncUserGroupLine);
}
