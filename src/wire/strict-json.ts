import { requestFailure } from './request-errors.js';
import { echoable } from '../domain/echoed-text.rules.js';
import type { AppError } from '../domain/errors.js';
import { nestedTooDeeply } from '../domain/user-groups/properties.rules.js';
import { MAX_PROPERTIES_DEPTH } from './contract.constants.js';

/**
 * How deep a request body, or one item of a body or file of many (an import's, a sync's), may nest:
 * `properties` sits one level below it and may itself be MAX_PROPERTIES_DEPTH deep; every other
 * field is shallower. Deeper text is refused before any code walks the parsed value, so nothing
 * downstream (validation, the idempotency fingerprint) meets it.
 */
export const MAX_BODY_DEPTH = MAX_PROPERTIES_DEPTH + 1;

/**
 * What JSON.parse accepts but the service refuses (docs/api.md#wire-conventions): each has one
 * meaning, or none. The API's bodies and query values and the CLI's import and sync files are all
 * parsed with parseStrictJson, so a text one refuses, the others refuse.
 */
export type JsonDefect =
  | { kind: 'syntax' }
  | { kind: 'duplicate_key'; key: string }
  | { kind: 'lone_surrogate' }
  | { kind: 'forbidden_key' }
  /** `field`: the key of the outermost object under which the nesting went too deep, if any. */
  | { kind: 'too_deep'; field: string | undefined };

export type StrictJson = { ok: true; value: unknown } | { ok: false; defect: JsonDefect };

/**
 * JSON.parse, then one iterative pass over the text for what it lets through: a key twice in one
 * object (JSON.parse silently keeps the last, a proxy may keep the first), a lone surrogate in an
 * escape (which no UTF-8 text can carry), prototype-polluting keys, and nesting beyond `maxDepth`.
 */
export function parseStrictJson(text: string, maxDepth: number): StrictJson {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, defect: { kind: 'syntax' } };
  }
  const defect = findDefect(text, maxDepth);
  return defect ? { ok: false, defect } : { ok: true, value };
}

interface Frame {
  /** The keys seen so far in an object; null for an array. */
  keys: Set<string> | null;
  /** In an object: the next string is a key (after `{` or `,`), not a value. */
  expectsKey: boolean;
  /** The key this object or array is the value of, when its parent is an object. */
  parentKey: string | undefined;
  lastKey: string | undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

// Runs only on text JSON.parse accepted, so its structure is known to be sound.
function findDefect(text: string, maxDepth: number): JsonDefect | undefined {
  const frames: Frame[] = [];
  // The next backslash at or after the current position (-1: none left): found once per backslash,
  // so telling escaped strings from plain ones costs one pass over the text, not one per string.
  let backslash = text.indexOf('\\');
  for (let at = 0; at < text.length; at += 1) {
    const code = text.charCodeAt(at);
    const frame = frames.at(-1);
    if (code === QUOTE) {
      if (backslash !== -1 && backslash <= at) backslash = text.indexOf('\\', at + 1);
      let end = text.indexOf('"', at + 1);
      const escaped = backslash !== -1 && backslash < end;
      if (escaped) end = endOfEscapedString(text, at);
      // Value strings are sliced only when escaped (to check them); keys always, to compare them.
      const keys = frame?.expectsKey ? frame.keys : null;
      if (escaped || keys) {
        const string = escaped ? (JSON.parse(text.slice(at, end + 1)) as string) : text.slice(at + 1, end);
        if (escaped && !string.isWellFormed()) return { kind: 'lone_surrogate' };
        if (keys) {
          if (keys.has(string)) return { kind: 'duplicate_key', key: string };
          if (string === '__proto__' || (string === 'prototype' && frame!.parentKey === 'constructor'))
            return { kind: 'forbidden_key' };
          keys.add(string);
          frame!.expectsKey = false;
          frame!.lastKey = string;
        }
      }
      at = end;
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (frames.length >= maxDepth) return { kind: 'too_deep', field: frames[0]?.lastKey };
      frames.push({
        keys: code === OPEN_OBJECT ? new Set() : null,
        expectsKey: code === OPEN_OBJECT,
        parentKey: frame?.keys ? frame.lastKey : undefined,
        lastKey: undefined,
      });
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      frames.pop();
    } else if (code === COMMA && frame?.keys) {
      frame.expectsKey = true;
    }
  }
  return undefined;
}

/** The index of the quote that closes the string opened at `start`, walking its escapes (an escaped quote does not end it). */
function endOfEscapedString(text: string, start: number): number {
  let at = start + 1;
  while (text.charCodeAt(at) !== QUOTE) at += text.charCodeAt(at) === BACKSLASH ? 2 : 1;
  return at;
}

/**
 * Where JSON text came from, for the wording of its refusal: a request's body, the JSON text in the
 * query value `field`, or a file the CLI reads (`text`: a sync's, whose refusals stop the command).
 */
export type JsonSource = 'body' | 'text' | { field: string };

/**
 * The error for a defect of JSON text from `source`. A lone surrogate is bad JSON in a body or a
 * file but a bad value in a query (docs/api.md#wire-conventions).
 */
export function jsonDefectError(defect: JsonDefect, source: JsonSource = 'body'): AppError {
  const field = typeof source === 'object' ? source.field : undefined;
  if (defect.kind === 'too_deep') {
    const deepField = field ?? defect.field;
    if (deepField !== undefined) return nestedTooDeeply(echoable(deepField));
    return source === 'text' ? requestFailure.textNotObject() : requestFailure.bodyNotObject();
  }
  return requestFailure.jsonDefect(
    defect.kind,
    source,
    defect.kind === 'duplicate_key' ? echoable(defect.key) : undefined,
  );
}
