import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Compile } from 'typebox/compile';
import type { JsonObject } from '../domain/models.js';
import type { ImportLine, TransferredUserGroup } from '../domain/user-group-transfer.service.js';
import { TransferredUserGroupLine } from '../http/routes/user-groups.schemas.js';

// The same schema rules as the API's, compiled once for the whole file.
const lineValidator = Compile(TransferredUserGroupLine);

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
    if (text.trim() === '') continue;
    yield parseGroupLine(text, line);
  }
}

export function parseGroupLine(text: string, line: number): ImportLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { line, error: 'not valid JSON' };
  }
  if (lineValidator.Check(value)) return { line, group: value as TransferredUserGroup & { properties?: JsonObject | null } };
  return { line, error: describeFirstError(value) };
}

function describeFirstError(value: unknown): string {
  const errors = [...lineValidator.Errors(value)];
  const unknown = errors.find((error) => error.keyword === 'additionalProperties' && error.instancePath === '');
  const extra = (unknown?.params as { additionalProperties?: string[] } | undefined)?.additionalProperties?.[0];
  if (extra !== undefined) return `unknown field "${extra}"`;
  const first = errors.find((error) => error.keyword !== 'boolean' && error.keyword !== 'anyOf') ?? errors[0];
  if (!first) return 'invalid user group';
  const field = first.instancePath.split('/').slice(1).join('.');
  return field === '' ? `${first.message}` : `"${field}" ${first.message}`;
}
