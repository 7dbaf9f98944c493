import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Server-process tests spawn real processes; two cores do not gain from more parallel files.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
