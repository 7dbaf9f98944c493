// docs/architecture.md's how-to "Adding a field to user groups" names the files a newcomer
// touches; every path it names must exist, so the how-to cannot point at files that moved or went.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const HEADING = '## How to: adding a field to user groups';

/** The how-to's text: from its heading to the next second-level heading. */
function howTo(): string {
  const architecture = readFileSync(join(REPO, 'docs/architecture.md'), 'utf8');
  const start = architecture.indexOf(HEADING);
  expect(start, `docs/architecture.md has the section "${HEADING}"`).toBeGreaterThanOrEqual(0);
  const end = architecture.indexOf('\n## ', start + HEADING.length);
  return architecture.slice(start, end === -1 ? undefined : end);
}

/** The repository paths in code spans (`src/…`, `test/…`, …); a placeholder (`<name>`) names no file yet. */
function namedPaths(text: string): string[] {
  return [...text.matchAll(/`([^`\s]+)`/g)]
    .map((match) => match[1]!)
    .filter((span) => /^(?:src|test|docs|console|packages)\/[^<>]+\.[a-z]+$/.test(span));
}

describe('the how-to of docs/architecture.md', () => {
  const paths = namedPaths(howTo());

  it('names the files of every layer it walks through', () => {
    for (const layer of ['src/store/sqlite/', 'src/store/postgres/', 'src/domain/', 'src/wire/', 'console/', 'test/'])
      expect(
        paths.some((path) => path.startsWith(layer)),
        layer,
      ).toBe(true);
  });

  it.each(paths)('%s exists', (path) => {
    expect(existsSync(join(REPO, path))).toBe(true);
  });
});
