import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/support/longest-first.sequencer.js';

/*
 * One `vitest run` runs three projects (`--project <name>` picks one):
 * - store: the store contract and engine specifics; those files run each engine themselves.
 * - sqlite: every other suite on SQLite (UGS_TEST_ENGINE=sqlite), PostgreSQL-only files aside; the
 *   admin console in Chromium (test/console) runs here only, the console being the same on both engines.
 * - postgres: the HTTP, security and scale suites that reach storage behaviour, again on PostgreSQL
 *   (UGS_TEST_ENGINE=postgres), SQLite-only files aside. PostgreSQL that cannot be reached fails these
 *   tests; nothing skips. The rule, decided per file by what its assertions depend on: a file runs on
 *   both engines when the engine can change its outcome — writes that commit together or not at all
 *   (audit events, webhook outbox, import batches, sync runs, idempotency records), concurrency, locks
 *   and several processes on one database, queries each engine writes its own way (lists, filters,
 *   pages, the hierarchy, the hot reads and their token check), tenant isolation, stored state and
 *   keys at rest. A file whose assertions are settled before or beside storage runs once, on SQLite:
 *   validation and its error envelopes, authentication parsing, headers, CORS, the docs and
 *   /openapi.json, rate limiting, metrics of the HTTP layer, sockets and slow clients, signals,
 *   signing and minting tokens, logs, OIDC and console sign-in. ENGINE_INDEPENDENT lists those files;
 *   a new file runs on both engines unless added there. Every store method still runs on both
 *   engines through the store contract (the store project).
 *   The CLI suites stay SQLite-only: quickstart, key file and first start are the embedded default's.
 *   So do the release suites (test/release): the release is made and installed once, and run on
 *   SQLite as a fresh install is; its PID-1 test needs root (unshare, setpriv).
 * test/support/test-database.ts reads UGS_TEST_ENGINE; test/scale/workers.test.ts,
 * test/scale/crash-safety.test.ts and test/scale/contention.test.ts loop over both engines
 * themselves, so they run once, in the sqlite project.
 */
/** test/{http,security,scale} files whose outcome the engine cannot change (see above): SQLite only. */
const ENGINE_INDEPENDENT = [
  // Validation, refusals decided before storage, and their error envelopes.
  'test/http/access-rules.errors.test.ts',
  'test/http/user-groups.errors.test.ts',
  'test/http/webhooks.errors.test.ts',
  'test/http/fuzz.property.test.ts',
  // Authentication parsing, admission before the body is read, headers, CORS, rate limiting.
  'test/http/auth.test.ts',
  'test/http/user-group-import.admission.test.ts',
  'test/http/user-group-sync.admission.test.ts',
  'test/http/cors.test.ts',
  'test/http/rate-limit.test.ts',
  'test/http/request-metrics.test.ts',
  // Documents: /openapi.json, the hosted product's paths and examples, the README and the migrating guide.
  'test/http/openapi.test.ts',
  'test/http/hosted-docs.test.ts',
  'test/http/hosted-paths.test.ts',
  'test/http/readme-examples.test.ts',
  'test/http/migrating-guide.test.ts',
  'test/http/migrating-guide-http.test.ts',
  // Signing and minting embed tokens (their stored state: embed-token-lifecycle, embed-token-revocations).
  'test/http/embed-tokens.test.ts',
  'test/http/embed-tokens.sealed.test.ts',
  // Secrets kept out of answers and logs; sockets, slow clients and a refused body's cost.
  'test/http/user-group-import.security.test.ts',
  'test/http/user-group-sync.load.test.ts',
  'test/security/log-hygiene.test.ts',
  'test/security/transport.test.ts',
  'test/security/hardening.test.ts',
  'test/security/webhook-ssrf.test.ts',
  // Console sign-in: cookies, sessions' HTTP rules, the identity provider's way back.
  'test/security/console-sessions.test.ts',
  'test/security/console-oidc.test.ts',
  // The cluster primary's shared counters and buckets, and SIGTERM's shutdown delay.
  'test/scale/metrics-workers.test.ts',
  'test/scale/rate-limit-workers.test.ts',
  'test/scale/shutdown-delay.test.ts',
];

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
    // (each test app's pool holds up to 10 of the server's 100). Measured: two workers keep both cores
    // 90-98 % busy; a third took the whole suite from 473-484 s to 549 s.
    maxWorkers: 2,
    // Files share their worker's module graph instead of importing the service afresh each: no file
    // mocks a module or stubs a global, and each builds its own apps, databases and processes. Measured
    // on test/http and test/security (70 files, SQLite): 223 s of CPU isolated against 129 s shared,
    // vitest's import phase 182 s against 13 s. A file that needs a process of its own spawns one.
    isolate: false,
    reporters: ['default'],
    // The longest files first, from the durations recorded in the repository (a fresh clone has no
    // vitest cache to order by): see test/support/longest-first.sequencer.ts.
    sequence: { sequencer: LongestFirstSequencer },
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
            ...ENGINE_INDEPENDENT,
            'test/scale/workers.test.ts',
            'test/scale/crash-safety.test.ts',
            'test/scale/contention.test.ts',
            'test/scale/usage-counting.test.ts',
          ],
          env: { UGS_TEST_ENGINE: 'postgres' },
          // Fails each file outright when PostgreSQL cannot be reached (rather than skipping its tests).
          setupFiles: ['test/support/require-postgres.setup.ts'],
          // One schema migrated for the run, which test apps copy instead of migrating their own
          // (test/support/migrated-postgres.ts).
          globalSetup: ['test/support/migrated-postgres.global-setup.ts'],
        },
      },
    ],
  },
});
