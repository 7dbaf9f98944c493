import { readFileSync, writeFileSync } from 'node:fs';

/** Writes a JSON Lines file: each value as one line of JSON, except strings, written as they are (for malformed lines). */
export function writeJsonLines(path: string, lines: readonly unknown[]): void {
  writeFileSync(path, lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n');
}

/** Every non-blank line of a JSON Lines file, parsed. */
export function readJsonLines<T = Record<string, unknown>>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}
