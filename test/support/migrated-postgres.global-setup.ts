/*
 * Global setup of the `postgres` project (vitest.config.ts): one schema migrated through the
 * production code path (openPostgresStore, then migrate) for the whole run, which test apps copy
 * instead of migrating a schema each (test/support/migrated-postgres.ts). Its teardown drops it with
 * every copy still left (each copy's name starts with the template's). When PostgreSQL cannot be
 * reached nothing is provided: apps then migrate as before, and the project's setup file fails each
 * file with the reason.
 */
import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { schemaUrl, withPostgresClient } from './test-database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's migrated template schema on the test database, or '' when none could be made. */
    migratedPostgresTemplate: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const template = `m_${randomBytes(6).toString('hex')}`;
  try {
    await withPostgresClient((client) => client.query(`CREATE SCHEMA ${template}`));
    const store = openPostgresStore({ url: schemaUrl(template) });
    try {
      await store.migrate();
    } finally {
      await store.close();
    }
    project.provide('migratedPostgresTemplate', template);
  } catch {
    project.provide('migratedPostgresTemplate', '');
  }
  return async () => {
    await withPostgresClient(async (client) => {
      const { rows } = await client.query<{ name: string }>(
        `SELECT nspname AS name FROM pg_namespace WHERE nspname = $1 OR starts_with(nspname, $1 || '_')`,
        [template],
      );
      for (const { name } of rows) await client.query(`DROP SCHEMA ${name} CASCADE`);
    }).catch(() => undefined);
  };
}
