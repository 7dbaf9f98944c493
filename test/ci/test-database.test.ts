// The PostgreSQL test database: .ci/create-test-database makes it when missing, and the
// postgres project's setup says how to create it instead of telling to start a server that runs.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { POSTGRES_URL, withPostgresClient } from '../support/test-database.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

function run(file: string, args: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: REPO, env: { ...process.env, ...env }, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

/** The test server's URL with another database. */
function urlOf(database: string): string {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

const databaseExists = (name: string) =>
  withPostgresClient(
    async (client) => (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1,
  );

describe('the PostgreSQL test database', () => {
  it('.ci/create-test-database creates the database of UGS_TEST_POSTGRES_URL when missing, and only then', async () => {
    const name = `ugs_ci_${randomBytes(6).toString('hex')}`;
    try {
      const first = await run(join(REPO, '.ci', 'create-test-database'), [], { UGS_TEST_POSTGRES_URL: urlOf(name) });
      expect(first, first.output).toMatchObject({ code: 0 });
      expect(first.output).toContain(`created the test database ${name}`);
      expect(await databaseExists(name)).toBe(true);
      const again = await run(join(REPO, '.ci', 'create-test-database'), [], { UGS_TEST_POSTGRES_URL: urlOf(name) });
      expect(again).toEqual({ code: 0, output: '' });
    } finally {
      await withPostgresClient((client) => client.query(`DROP DATABASE IF EXISTS ${name}`));
    }
  });

  it('a missing database fails the postgres project with how to create it', async () => {
    const name = `ugs_missing_${randomBytes(6).toString('hex')}`;
    const result = await run(process.execPath, ['--import', 'tsx', 'test/support/require-postgres.setup.ts'], {
      UGS_TEST_POSTGRES_URL: urlOf(name),
    });
    expect(result.code).not.toBe(0);
    expect(result.output).toContain(`has no database "${name}". Create it once: createdb`);
    expect(result.output).not.toContain('start the local server');
    expect(await databaseExists(name)).toBe(false);
  });
});
