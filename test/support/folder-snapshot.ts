// What "nothing was written" looks like from outside: a folder's files with their sizes and mtimes.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every file of `dir` (not below it) as `name size mtimeMs`, sorted by name. */
export function folderSnapshot(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .map((name) => {
      const stats = statSync(join(dir, name));
      return `${name} ${stats.size} ${stats.mtimeMs}`;
    });
}
