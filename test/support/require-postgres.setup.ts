/*
 * Setup file of the `postgres` project (vitest.config.ts): every test file on PostgreSQL first makes
 * sure the server answers. When it does not, the file fails here, loudly and with the reason, instead
 * of its tests being reported as skipped behind a failing beforeAll: an unreachable PostgreSQL fails
 * the run, it never skips anything.
 */
import { POSTGRES_URL, withPostgresClient } from './test-database.js';

function redacted(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

/** PostgreSQL's "database does not exist": the server answers, only the test database is missing. */
const INVALID_CATALOG_NAME = '3D000';

try {
  await withPostgresClient((client) => client.query('SELECT 1'));
} catch (error) {
  const url = new URL(POSTGRES_URL);
  const database = decodeURIComponent(url.pathname.slice(1));
  if ((error as { code?: string }).code === INVALID_CATALOG_NAME) {
    url.pathname = '/postgres';
    throw new Error(
      `PostgreSQL at ${redacted(POSTGRES_URL)} answers but has no database "${database}". Create it once: ` +
        `createdb --maintenance-db='${redacted(url.toString())}' '${database}' (.ci/run does), or point UGS_TEST_POSTGRES_URL at another database.`,
      { cause: error },
    );
  }
  throw new Error(
    `PostgreSQL at ${redacted(POSTGRES_URL)} cannot be reached (${(error as Error).message}). The postgres project needs it: ` +
      'start the local server (.ci/run does) or point UGS_TEST_POSTGRES_URL at one; `--project sqlite` runs without it.',
    { cause: error },
  );
}
