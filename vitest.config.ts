import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/*
 * One `vitest run` runs three projects (`--project <name>` picks one):
 * - store: the store contract and engine specifics; those files run each engine themselves.
 * - sqlite: every other suite on SQLite (UGS_TEST_ENGINE=sqlite), PostgreSQL-only files aside; the
 *   admin console in Chromium (test/console) runs here only, the console being the same on both engines.
 * - postgres: the HTTP, security and scale suites again on PostgreSQL (UGS_TEST_ENGINE=postgres),
 *   SQLite-only files aside. PostgreSQL that cannot be reached fails these tests; nothing skips.
 *   The CLI suites stay SQLite-only: quickstart, key file and first start are the embedded default's.
 *   So do the release suites (test/release): the release is made and installed once, and run on
 *   SQLite as a fresh install is; its PID-1 test needs root (unshare, setpriv).
 * test/support/test-database.ts reads UGS_TEST_ENGINE; test/scale/workers.test.ts,
 * test/scale/crash-safety.test.ts and test/scale/contention.test.ts loop over both engines
 * themselves, so they run once, in the sqlite project.
 */
export default defineConfig({
  // packages/client's `#crypto` points at its built files (package.json "imports"); the tests run its
  // sources, with the Node implementation (tsconfig.json says the same for the type check).
  resolve: {
    alias: { '#crypto': fileURLToPath(new URL('packages/client/src/crypto/node.ts', import.meta.url)) },
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Shared by all projects (one group): server-process tests spawn real processes, two cores do
    // not gain from more parallel files, and it bounds the PostgreSQL connections open at once
    // (each test app's pool holds up to 10 of the server's 100).
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: { name: 'store', include: ['test/store/**/*.test.ts'] },
      },
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          exclude: ['test/store/**', '**/*.postgres.test.ts'],
          env: { UGS_TEST_ENGINE: 'sqlite' },
        },
      },
      {
        extends: true,
        // The client library (packages/client) against a real server on SQLite.
        test: { name: 'client', include: ['packages/client/test/**/*.test.ts'], env: { UGS_TEST_ENGINE: 'sqlite' } },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: ['test/{http,security,scale}/**/*.test.ts'],
          exclude: [
            '**/*.sqlite.test.ts',
            'test/scale/workers.test.ts',
            'test/scale/crash-safety.test.ts',
            'test/scale/contention.test.ts',
            'test/scale/usage-counting.test.ts',
          ],
          env: { UGS_TEST_ENGINE: 'postgres' },
          // Fails each file outright when PostgreSQL cannot be reached (rather than skipping its tests).
          setupFiles: ['test/support/require-postgres.setup.ts'],
        },
      },
    ],
  },
});
