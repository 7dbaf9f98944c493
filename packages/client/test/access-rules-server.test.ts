// The renderer's whole path on real parts. A real server holds three tenants'
// groups under one customer whose rule every tenant inherits; for each tenant a token is minted through
// the server's HTTP API, verified offline with the client, turned into a filter with accessRulesToSql,
// and the query on a real SQLite and a real PostgreSQL table returns exactly that tenant's rows. Values
// crafted as SQL are the tenants' own property values, and come back as data; names that are not
// identifiers are refused when the rule is written, so they never reach a token.
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL } from '../../../test/support/test-database.js';
import { createTestApp, type TestApp } from '../../../test/support/test-app.js';
import { adminCaller } from '../../../test/support/callers.js';
import { accessRulesToSql, createClient, createEmbedTokenVerifier, type SqlFilter } from '../src/index.js';

/** Each tenant's name is also the value its rows carry; two are crafted as SQL, one with a look-alike quote. */
const TENANTS = ['acme', "globex'; DROP TABLE orders; --", 'ｉnitech＇ OR 1=1 -- /*'] as const;
const ROWS = [
  { id: 1, tenant: TENANTS[0], region: 'eu', archived: false },
  { id: 2, tenant: TENANTS[0], region: 'us', archived: false },
  { id: 3, tenant: TENANTS[0], region: 'eu', archived: true },
  { id: 4, tenant: TENANTS[1], region: 'eu', archived: false },
  { id: 5, tenant: TENANTS[1], region: 'apac', archived: false },
  { id: 6, tenant: TENANTS[2], region: 'us', archived: false },
  { id: 7, tenant: TENANTS[2], region: 'eu', archived: false },
  { id: 8, tenant: 'nobody', region: 'eu', archived: false },
];
/** Exactly the rows each tenant may see: its own, not archived (the customer's rule). */
const EXPECTED = TENANTS.map((tenant) =>
  ROWS.filter((row) => row.tenant === tenant && !row.archived).map((row) => row.id),
);

let t: TestApp;
let baseUrl = '';
let sqlite: Database.Database;
let postgres: pg.Client;
const pgSchema = `r_${randomBytes(8).toString('hex')}`;

beforeAll(async () => {
  t = await createTestApp({ publicUrl: () => baseUrl });
  baseUrl = await t.listen();

  sqlite = new Database(':memory:');
  sqlite.exec(
    'CREATE TABLE orders (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, region TEXT, archived BOOLEAN NOT NULL)',
  );
  const insert = sqlite.prepare('INSERT INTO orders VALUES (?, ?, ?, ?)');
  for (const row of ROWS) insert.run(row.id, row.tenant, row.region, Number(row.archived));

  postgres = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
  await postgres.connect();
  await postgres.query(`CREATE SCHEMA ${pgSchema}`);
  await postgres.query(
    `CREATE TABLE ${pgSchema}.orders (id integer PRIMARY KEY, tenant text NOT NULL, region text, archived boolean NOT NULL)`,
  );
  for (const row of ROWS)
    await postgres.query(`INSERT INTO ${pgSchema}.orders VALUES ($1, $2, $3, $4)`, [
      row.id,
      row.tenant,
      row.region,
      row.archived,
    ]);
}, 60_000);

afterAll(async () => {
  sqlite?.close();
  if (postgres) {
    await postgres.query(`DROP SCHEMA IF EXISTS ${pgSchema} CASCADE`);
    await postgres.end();
  }
  await t?.close();
});

const queries = {
  sqlite: async (filter: SqlFilter) =>
    sqlite
      .prepare(`SELECT id FROM orders WHERE ${filter.text} ORDER BY id`)
      .pluck()
      .all(...filter.values) as number[],
  postgres: async (filter: SqlFilter) =>
    (
      await postgres.query<{ id: number }>(
        `SELECT id FROM ${pgSchema}.orders WHERE ${filter.text} ORDER BY id`,
        filter.values,
      )
    ).rows.map((row) => row.id),
};

describe('access rules from the server to a renderer query', () => {
  it('gives each of three tenants exactly its rows, on a real SQLite and a real PostgreSQL table', async () => {
    const admin = createClient({ baseUrl, apiToken: t.tokens.default.Customer.admin });
    const reader = createClient({ baseUrl, apiToken: t.tokens.default.Customer.read });
    const caller = await adminCaller(t);
    const schemaId = (
      await t.runtime.services.schemas.createSchema(caller, { name: `renderer-${randomBytes(4).toString('hex')}` })
    ).id;
    const tables = { sqlite: 'orders', postgres: `${pgSchema}.orders` };
    const suffix = randomBytes(4).toString('hex');
    // The customer's rules, which every tenant below inherits: no archived rows, on either table.
    const customer = `customer-${suffix}`;
    await admin.getOrCreateUserGroup({
      user_group_id: customer,
      access_rules: Object.values(tables).map((table) => ({
        schema_id: schemaId,
        table,
        column: 'archived',
        op: 'eq',
        value: false,
      })),
    });
    const verify = createEmbedTokenVerifier({ issuer: `${baseUrl}/w/default`, audience: 'ugs-embed' });

    for (const [index, tenant] of TENANTS.entries()) {
      const id = `tenant-${index}-${suffix}`;
      await admin.getOrCreateUserGroup({
        user_group_id: id,
        parent_user_group_id: customer,
        properties: { tenant },
        access_rules: Object.values(tables).map((table) => ({
          schema_id: schemaId,
          table,
          column: 'tenant',
          op: 'eq',
          value: { property: 'tenant' },
        })),
      });
      // Whoever mints cannot change the rule: a per-view value of another key never reaches it.
      const { embed_token } = await reader.mintEmbedToken({ user_group_id: id, properties: { viewer: 'x' } });
      const claims = await verify(embed_token);
      const rules = claims.ugs.access_rules ?? [];
      expect(rules).toHaveLength(4);
      for (const dialect of ['sqlite', 'postgres'] as const) {
        const filter = accessRulesToSql(rules, { dialect, table: tables[dialect], schemaId });
        expect(filter.text).not.toContain(tenant);
        expect(await queries[dialect](filter), `${tenant} on ${dialect}`).toEqual(EXPECTED[index]);
      }
    }
    // The crafted values were data: both tables are whole.
    expect(sqlite.prepare('SELECT count(*) FROM orders').pluck().get()).toBe(ROWS.length);
    expect((await postgres.query(`SELECT count(*)::int AS n FROM ${pgSchema}.orders`)).rows[0].n).toBe(ROWS.length);
  });

  it('refuses names that are not identifiers when the rule is written, so no token ever carries one', async () => {
    const admin = createClient({ baseUrl, apiToken: t.tokens.default.Customer.admin });
    const caller = await adminCaller(t);
    const schemaId = (
      await t.runtime.services.schemas.createSchema(caller, { name: `names-${randomBytes(4).toString('hex')}` })
    ).id;
    const crafted = [
      { table: 'orders; DROP TABLE orders', column: 'tenant' },
      { table: 'orders', column: 'tenant = tenant OR 1' },
      { table: '"orders"', column: 'tenant' },
      { table: 'orders', column: 'ｔenant' },
      { table: 'a.b.c', column: 'tenant' },
      { table: 'orders', column: 'tenant--' },
    ];
    for (const [index, names] of crafted.entries()) {
      const id = `crafted-${index}-${randomBytes(4).toString('hex')}`;
      const refused = await admin
        .getOrCreateUserGroup({
          user_group_id: id,
          access_rules: [{ schema_id: schemaId, op: 'eq', value: 1, ...names }],
        })
        .then(
          () => null,
          (error: { status?: number; code?: string; field?: string }) => error,
        );
      expect(refused).toMatchObject({ status: 400, code: 'invalid_field' });
      expect(refused?.field).toMatch(/^access_rules\[0\]\.(table|column)$/);
    }
  });
});
