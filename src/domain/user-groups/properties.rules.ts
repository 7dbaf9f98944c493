import { failure, type AppError } from '../errors.js';
import type { JsonObject, JsonValue } from '../common.records.js';
import { MAX_PROPERTIES_BYTES, MAX_PROPERTIES_DEPTH } from '../../wire/contract.constants.js';
import { isStorableText } from '../storable-text.rules.js';

/**
 * The rules JSON Schema cannot express: serialized size, nesting depth, and values that would not
 * come back as they were sent (docs/api.md#wire-conventions): a number JSON cannot carry exactly (non-finite, or an
 * integer beyond ±(2^53−1)), and text with a NUL or a lone surrogate, which PostgreSQL cannot store
 * and SQLite would store for one engine only.
 */
export function assertPropertiesWithinLimits(properties: JsonObject | null): void {
  if (properties === null) return;
  // Before serializing: a deep document must not reach JSON.stringify.
  const defect = findDefect(properties);
  if (defect) throw defect;
  if (Buffer.byteLength(JSON.stringify(properties), 'utf8') > MAX_PROPERTIES_BYTES) {
    throw failure.propertiesTooLarge(MAX_PROPERTIES_BYTES);
  }
}

/** The nesting limit is the properties' one; the HTTP layer meets deeper text under any field before parsing it further. */
export function nestedTooDeeply(field: string): AppError {
  return failure.nestedTooDeeply(field, MAX_PROPERTIES_DEPTH);
}

const invalidProperties = failure.invalidProperties;

// Iterative so that hostile nesting cannot exhaust the stack.
function findDefect(root: JsonObject): AppError | undefined {
  const pending: Array<{ value: JsonValue; depth: number }> = [{ value: root, depth: 1 }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const { value, depth } = item;
    if (
      typeof value === 'number' &&
      !Number.isSafeInteger(value) &&
      (!Number.isFinite(value) || Number.isInteger(value))
    ) {
      return invalidProperties(
        `may hold only numbers that JSON carries exactly: finite, and integers within ±${Number.MAX_SAFE_INTEGER}`,
      );
    }
    if (typeof value === 'string' && !isStorableText(value)) return invalidText();
    if (value === null || typeof value !== 'object') continue;
    if (depth > MAX_PROPERTIES_DEPTH) return nestedTooDeeply('properties');
    if (Array.isArray(value)) {
      for (const child of value) pending.push({ value: child, depth: depth + 1 });
      continue;
    }
    for (const [key, child] of Object.entries(value)) {
      if (!isStorableText(key)) return invalidText();
      pending.push({ value: child, depth: depth + 1 });
    }
  }
  return undefined;
}

const invalidText = () => invalidProperties('may not hold a NUL character or a lone surrogate, in keys or values');
