import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { ImportLine } from '../domain/user-groups/user-group-transfer.service.js';
import { parseGroupLine } from '../wire/user-group-import.reader.js';

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
