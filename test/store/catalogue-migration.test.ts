import { afterEach, describe, expect, it } from 'vitest';
import { parseDatabaseUrl } from '../../src/config/database-url.js';
import { openPostgresDatabase } from '../../src/store/postgres/postgres-database.js';
import { migratePostgres } from '../../src/store/postgres/migrate.js';
import { MIGRATIONS as POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations/index.js';
import { openStore } from '../../src/store/open-store.js';
import { openSqliteDatabase } from '../../src/store/sqlite/sqlite-database.js';
import { migrateSqlite } from '../../src/store/sqlite/migrate.js';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../src/store/sqlite/migrations/index.js';
import type { Store } from '../../src/domain/store.port.js';
import { createTestDatabase, type TestDatabase, type TestEngine } from '../support/test-database.js';
import { auditContext, T1 } from './store-fixtures.js';

/*
 * Migration 0010 (schema and data-source ids become numbers of their workspace) on a database that
 * the releases before it wrote: ids were then unique in the whole deployment. The rows are written
 * as those releases wrote them, in plain SQL valid on both engines, at the schema version before 10.
 */
const BEFORE = 10;
const OLD_STATE = [
  "INSERT INTO workspaces (name, created_at) VALUES ('acme', '2026-01-01T00:00:00.000Z')",
  "INSERT INTO workspaces (name, created_at) VALUES ('globex', '2026-01-01T00:00:00.000Z')",
  // Schema ids 1 (acme), 2 (globex), 3 (acme).
  "INSERT INTO schemas (workspace_id, name, created_at) VALUES (1, 'sales', '2026-01-01T00:00:00.000Z')",
  "INSERT INTO schemas (workspace_id, name, created_at) VALUES (2, 'sales', '2026-01-01T00:00:00.000Z')",
  "INSERT INTO schemas (workspace_id, name, created_at) VALUES (1, 'marketing', '2026-01-01T00:00:00.000Z')",
  // Data source ids 1 (acme, schema 3), 2 (globex), 3 (acme, then deleted: its id is never issued again).
  `INSERT INTO data_sources (workspace_id, environment, provided_id, name, schema_id, created_at)
    VALUES (1, 'Customer', '213', 'Warehouse', 3, '2026-01-01T00:00:00.000Z')`,
  `INSERT INTO data_sources (workspace_id, environment, provided_id, name, schema_id, created_at)
    VALUES (2, 'Customer', '213', 'Warehouse', 2, '2026-01-01T00:00:00.000Z')`,
  `INSERT INTO data_sources (workspace_id, environment, provided_id, name, schema_id, created_at)
    VALUES (1, 'Customer', 'gone', 'Gone', 1, '2026-01-01T00:00:00.000Z')`,
  'DELETE FROM data_sources WHERE id = 3',
  `INSERT INTO user_groups (workspace_id, environment, provided_id, name, token_hash, token_ciphertext, created_at, updated_at)
    VALUES (1, 'Customer', 'example_1', 'Example 1', 'hash-1', 'v1.00000000.x.y.z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`,
  'INSERT INTO user_group_mappings (team_id, schema_id, data_source_id) VALUES (1, 3, 1)',
];

/** Brings a fresh database to the schema version before 10 and writes the old rows. */
async function writeOldState(database: TestDatabase): Promise<void> {
  const location = parseDatabaseUrl(database.url);
  if (location.engine === 'sqlite') {
    const db = openSqliteDatabase({ path: location.path });
    migrateSqlite(
      db,
      SQLITE_MIGRATIONS.filter((migration) => migration.version < BEFORE),
    );
    for (const statement of OLD_STATE) db.exec(statement);
    db.close();
    return;
  }
  const db = openPostgresDatabase({ url: location.url });
  await migratePostgres(
    db,
    POSTGRES_MIGRATIONS.filter((migration) => migration.version < BEFORE),
  );
  for (const statement of OLD_STATE) await db.rows({ text: statement, values: [] });
  await db.close();
}

describe.each<TestEngine>(['sqlite', 'postgres'])('migration 0010 on %s', (engine) => {
  let database: TestDatabase;
  let store: Store | undefined;

  afterEach(async () => {
    await store?.close();
    await database.drop();
  });

  it('keeps every schema and data source id and every mapping; new ids continue above every id issued', async () => {
    database = await createTestDatabase(engine);
    await writeOldState(database);
    store = openStore(parseDatabaseUrl(database.url));
    await store.migrate();
    const acme = (await store.findWorkspaceByName('acme'))!;
    const globex = (await store.findWorkspaceByName('globex'))!;
    const customer = { workspaceId: acme.id, environment: 'Customer' as const };

    expect((await store.listSchemas(acme.id)).map((schema) => [schema.id, schema.name])).toEqual([
      [1, 'sales'],
      [3, 'marketing'],
    ]);
    expect((await store.listSchemas(globex.id)).map((schema) => schema.id)).toEqual([2]);
    expect(await store.listDataSources(acme.id)).toMatchObject([{ id: 1, schemaId: 3, providedId: '213' }]);
    expect(await store.listDataSources(globex.id)).toMatchObject([{ id: 2, schemaId: 2 }]);
    const group = await store.findUserGroupByProvidedId(customer, 'example_1');
    expect(group?.mapping).toEqual([{ schemaId: 3, dataSourceId: 1 }]);

    // Above every id the deployment had issued (3 of each), the deleted data source's included.
    expect((await store.insertSchema(acme.id, 'new', auditContext())).id).toBe(4);
    expect((await store.insertSchema(globex.id, 'new', auditContext())).id).toBe(4);
    const source = { tenant: customer, providedId: 'new', name: 'New', schemaId: 1, createdAt: T1 };
    expect((await store.insertDataSource(source, auditContext())).id).toBe(4);
    // Existing numbers are taken; a free one can be chosen.
    await expect(store.insertSchema(acme.id, 'again', auditContext(), 3)).rejects.toMatchObject({ code: 'id_taken' });
    expect((await store.insertSchema(acme.id, 'hosted', auditContext(), 40)).id).toBe(40);
  });
});
