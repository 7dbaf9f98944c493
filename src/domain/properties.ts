import { AppError } from './errors.js';
import type { JsonObject, JsonValue } from './models.js';

export const MAX_PROPERTIES_BYTES = 64 * 1024;
export const MAX_PROPERTIES_DEPTH = 16;

/** The limits JSON Schema cannot express: serialized size and nesting depth. */
export function assertPropertiesWithinLimits(properties: JsonObject | null): void {
  if (properties === null) return;
  if (Buffer.byteLength(JSON.stringify(properties), 'utf8') > MAX_PROPERTIES_BYTES) {
    throw new AppError('invalid_field', `"properties" must be at most ${MAX_PROPERTIES_BYTES} bytes when serialized.`, { field: 'properties' });
  }
  if (depthExceeds(properties, MAX_PROPERTIES_DEPTH)) {
    throw new AppError('invalid_field', `"properties" must be nested at most ${MAX_PROPERTIES_DEPTH} levels deep.`, { field: 'properties' });
  }
}

// Iterative so that hostile nesting cannot exhaust the stack.
function depthExceeds(root: JsonValue, maxDepth: number): boolean {
  const pending: Array<{ value: JsonValue; depth: number }> = [{ value: root, depth: 1 }];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    if (item.depth > maxDepth) return true;
    const { value, depth } = item;
    if (value !== null && typeof value === 'object') {
      for (const child of Array.isArray(value) ? value : Object.values(value)) {
        if (child !== null && typeof child === 'object') pending.push({ value: child, depth: depth + 1 });
      }
    }
  }
  return false;
}
