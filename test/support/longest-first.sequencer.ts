import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Where each test file's recorded time lives: test/support/file-durations.json, seconds by path
 * (the longest of its projects), written by `npm run test:durations` (file-durations.reporter.ts).
 */
export const FILE_DURATIONS = new URL('file-durations.json', import.meta.url);

/**
 * Hands the workers the files that took longest first, whatever their project, so that both workers
 * end together rather than one finishing a long file begun last while the other sits idle (on two
 * cores the suite's tail cost minutes). Vitest orders by durations from its own cache, which a fresh
 * clone — CI's — does not have, and then project by project; the record in the repository stands in
 * for that cache. A file not in the record yet runs first: new, so likely the one being worked on,
 * and of unknown length, which is better started early than late.
 */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const recorded = JSON.parse(readFileSync(FILE_DURATIONS, 'utf8')) as Record<string, number>;
    const seconds = (spec: TestSpecification) =>
      recorded[relative(this.ctx.config.root, spec.moduleId)] ?? Number.POSITIVE_INFINITY;
    return [...files].sort((a, b) => seconds(b) - seconds(a));
  }
}
