import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node';
import { FILE_DURATIONS } from './longest-first.sequencer.js';

/**
 * Records how long each test file held a worker (preparing, importing, setting up and running), in
 * seconds by path, the longest of its projects, into the record the longest-first sequencer reads
 * (`npm run test:durations`). A run of some files updates theirs and keeps the others'; files that
 * no longer exist leave the record. A run with a failure records nothing: a failed file's time says
 * little about a passing one's.
 */
export default class FileDurationsReporter implements Reporter {
  private root = '';

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    if (unhandledErrors.length > 0 || testModules.some((module) => module.state() !== 'passed')) return;
    const measured: Record<string, number> = {};
    for (const module of testModules) {
      const { prepareDuration, collectDuration, setupDuration, duration } = module.diagnostic();
      const held = Math.round((prepareDuration + collectDuration + setupDuration + duration) / 100) / 10;
      const path = relative(this.root, module.moduleId);
      measured[path] = Math.max(measured[path] ?? 0, held);
    }
    const recorded = JSON.parse(readFileSync(FILE_DURATIONS, 'utf8')) as Record<string, number>;
    const merged = Object.entries({ ...recorded, ...measured })
      .filter(([path]) => existsSync(join(this.root, path)))
      .sort(([a], [b]) => a.localeCompare(b));
    writeFileSync(FILE_DURATIONS, `${JSON.stringify(Object.fromEntries(merged), null, 2)}\n`);
  }
}
