import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { ImportLine, TransferredUserGroup } from '../domain/user-groups/user-group-transfer.service.js';
import { indexSupplement, type Supplement } from '../domain/user-groups/user-group-transfer.rules.js';
import { parseGroupLine } from '../wire/user-group-import.reader.js';

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

/** Reads JSON Lines: every non-blank line becomes a group or the reason it is not one (src/wire/user-group-import.reader.ts). */
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
