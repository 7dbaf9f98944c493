import { inject } from 'vitest';
import { captureSchemaTemplate, type SchemaTemplate } from './postgres-schema-template.js';
import { POSTGRES_URL, postgresTestDatabase, type TestDatabase } from './test-database.js';

let captured: Promise<SchemaTemplate> | undefined;

/**
 * A PostgreSQL test database already migrated, as a start on an empty one leaves it (analysed
 * included): a copy of the run's template (migrated-postgres.global-setup.ts), which costs a fraction
 * of migrating. Undefined outside the `postgres` project, or when the run has no template: the caller
 * then migrates an empty one itself.
 */
export async function migratedPostgresDatabase(): Promise<TestDatabase | undefined> {
  const template = inject('migratedPostgresTemplate');
  if (!template) return undefined;
  // Once per worker: files share their worker's module graph (isolate: false), so every file after
  // the first copies from the DDL already read. Copies left when the run ends go with the template.
  captured ??= captureSchemaTemplate(template, POSTGRES_URL, { namedAfterTemplate: true, analysed: true });
  const copy = await (await captured).clone();
  return postgresTestDatabase(copy.url, copy.drop);
}
