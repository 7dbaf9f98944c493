// The order the workers take the suite's files in: the longest recorded first, a file the record does
// not know before all (test/support/longest-first.sequencer.ts), across projects.
import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestSpecification, Vitest } from 'vitest/node';
import { describe, expect, it } from 'vitest';
import LongestFirstSequencer, { FILE_DURATIONS } from '../support/longest-first.sequencer.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const recorded = JSON.parse(readFileSync(FILE_DURATIONS, 'utf8')) as Record<string, number>;
const sequencer = new LongestFirstSequencer({ config: { root: ROOT } } as unknown as Vitest);
const spec = (path: string, project: string) =>
  ({ moduleId: join(ROOT, path), project: { name: project } }) as unknown as TestSpecification;
const pathOf = (file: TestSpecification) => relative(ROOT, file.moduleId);

describe('the longest-first order', () => {
  it('hands out the longest recorded files first, whatever their project, and an unknown file before them', async () => {
    const known = Object.entries(recorded).sort(([, a], [, b]) => a - b);
    expect(known.length).toBeGreaterThan(100);
    const shortest = known[0]![0];
    const longest = known.at(-1)![0];
    const middle = known[known.length >> 1]![0];
    const sorted = await sequencer.sort([
      spec(shortest, 'store'),
      spec(middle, 'postgres'),
      spec('test/ci/not-recorded-yet.test.ts', 'sqlite'),
      spec(longest, 'sqlite'),
    ]);
    expect(sorted.map(pathOf)).toEqual(['test/ci/not-recorded-yet.test.ts', longest, middle, shortest]);
  });

  it('records test files that exist, in seconds', () => {
    expect(Object.keys(recorded)).toContain('test/release/release.test.ts');
    for (const [path, seconds] of Object.entries(recorded)) {
      expect({ path, exists: existsSync(join(ROOT, path)) }).toEqual({ path, exists: true });
      expect(path).toMatch(/\.test\.ts$/);
      expect(seconds).toBeGreaterThanOrEqual(0);
    }
  });
});
