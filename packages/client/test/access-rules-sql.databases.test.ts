// accessRulesToSql's filters run on real databases (docs/api.md#access-rules): a real SQLite (better-sqlite3),
// a real PostgreSQL and a real MariaDB table of three tenants' rows. Each tenant's rules give exactly its
// rows; every operator gives what SQL's own semantics (NULLs included) say on text, integer, boolean and
// nullable columns; values crafted as SQL come back as data, never as SQL; look-alikes (case, spaces,
// accents), numbers against text and strings against numbers match on SQLite and MariaDB exactly what
// they match on PostgreSQL; names that are not identifiers never reach the database.
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import type mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMariadb } from '../../../test/support/mariadb-connection.js';
import { POSTGRES_URL } from '../../../test/support/test-database.js';
import {
  accessRulesToSql,
  AccessRuleError,
  type AccessRulesToSqlOptions,
  type ResolvedAccessRule,
  type SqlFilter,
} from '../src/index.js';

type Cell = string | number | boolean | null;
type Scalar = string | number | boolean;
interface Row {
  id: number;
  tenant: string;
  region: string | null;
  amount: number | null;
  paid: boolean | null;
  note: string | null;
}

/** Values an attacker would write into a rule hoping to be pasted into SQL; each is also a row's tenant and note. */
const CRAFTED = [
  "' OR 1=1 --",
  "' OR '1'='1",
  "'; DROP TABLE orders; --",
  "'); DROP TABLE canary; --",
  '" OR ""="',
  '/* */ OR 1=1',
  '-- comment',
  '\\',
  "\\'; SELECT 1; --",
  "\\' OR 1=1 #",
  '＇ OR 1=1 --', // FULLWIDTH APOSTROPHE
  'ʼ OR ʼ1ʼ=ʼ1', // MODIFIER LETTER APOSTROPHE
  '‘ OR 1=1 --', // LEFT SINGLE QUOTATION MARK
  "％' OR 1=1", // FULLWIDTH PERCENT SIGN
  '$1',
  '?',
  '%',
  '_',
  'acme\u0009',
  'ACME',
  'acme ',
  // Look-alikes of `acme`, and texts that a database converting between types reads as 0, 1 or a boolean.
  'Acme',
  ' acme',
  'ácme', // a with acute accent
  'Åcme', // A with ring above
  'acmé',
  'ａcme', // FULLWIDTH LATIN SMALL LETTER A
  '0',
  '00',
  '1',
  'true',
  'false',
  '',
];

const ROWS: Row[] = [
  { id: 1, tenant: 'acme', region: 'eu', amount: 10, paid: true, note: null },
  { id: 2, tenant: 'acme', region: 'us', amount: 20, paid: false, note: 'rush' },
  { id: 3, tenant: 'acme', region: 'eu', amount: 30, paid: true, note: null },
  { id: 4, tenant: 'globex', region: 'eu', amount: 15, paid: true, note: 'vip' },
  { id: 5, tenant: 'globex', region: 'apac', amount: 25, paid: false, note: null },
  { id: 6, tenant: 'initech', region: 'us', amount: 5, paid: false, note: 'late' },
  { id: 7, tenant: 'initech', region: null, amount: 50, paid: true, note: null },
  { id: 8, tenant: 'initech', region: 'us', amount: null, paid: null, note: null },
  ...CRAFTED.map((value, index) => ({
    id: 100 + index,
    tenant: value,
    region: 'zz',
    amount: 0,
    paid: false,
    note: value,
  })),
];
const COLUMNS = ['id', 'tenant', 'region', 'amount', 'paid', 'note'] as const;
const idsWhere = (holds: (row: Row) => boolean) => ROWS.filter(holds).map((row) => row.id);

/** A real database holding the table, queried with a filter the way a renderer would. */
interface Engine {
  dialect: 'postgres' | 'sqlite' | 'mysql';
  /** The table's name as the rules name it (and the FROM clause writes it). */
  table: string;
  /** The ids the filter lets through, `prefix` conditions (and their values) ANDed before it. */
  ids(filter: SqlFilter, query?: { alias?: string; prefix?: string; prefixValues?: unknown[] }): Promise<number[]>;
  /** The rows of the table and whether the canary table is still there. */
  intact(): Promise<{ rows: number; canary: boolean }>;
}

let sqlite: Database.Database;
let client: pg.Client;
const schema = `t_${randomBytes(8).toString('hex')}`;
// MariaDB (or MySQL): a table of this run's own in the database `test`, in utf8mb4 with the server's
// default collation for it (case- and accent-insensitive, trailing spaces ignored), as a renderer's would be.
const mariadb: mysql.Connection = await connectMariadb();
const mariadbTable = `orders_${randomBytes(8).toString('hex')}`;
const mariadbCanary = `canary_${randomBytes(8).toString('hex')}`;
const engines: Engine[] = [];

beforeAll(async () => {
  sqlite = new Database(':memory:');
  sqlite.exec(
    'CREATE TABLE orders (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, region TEXT, amount INTEGER, paid BOOLEAN, note TEXT);' +
      'CREATE TABLE canary (id INTEGER);',
  );
  const insert = sqlite.prepare('INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)');
  for (const row of ROWS)
    insert.run(...COLUMNS.map((column) => (typeof row[column] === 'boolean' ? Number(row[column]) : row[column])));
  engines.push({
    dialect: 'sqlite',
    table: 'orders',
    ids: async (filter, { alias, prefix = 'TRUE', prefixValues = [] } = {}) =>
      sqlite
        .prepare(`SELECT id FROM orders ${alias ?? ''} WHERE ${prefix} AND ${filter.text} ORDER BY id`)
        .pluck()
        .all(...prefixValues, ...filter.values) as number[],
    intact: async () => ({
      rows: sqlite.prepare('SELECT count(*) FROM orders').pluck().get() as number,
      canary: sqlite.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'canary'").pluck().get() === 1,
    }),
  });

  client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  // Collation "C": strings order byte for byte, as on the other engines (a database's default may be linguistic).
  await client.query(
    `CREATE TABLE ${schema}.orders (id integer PRIMARY KEY, tenant text COLLATE "C" NOT NULL, region text COLLATE "C", amount integer, paid boolean, note text COLLATE "C")`,
  );
  await client.query(`CREATE TABLE ${schema}.canary (id integer)`);
  for (const row of ROWS)
    await client.query(
      `INSERT INTO ${schema}.orders VALUES ($1, $2, $3, $4, $5, $6)`,
      COLUMNS.map((column) => row[column]),
    );
  engines.push({
    dialect: 'postgres',
    table: `${schema}.orders`,
    ids: async (filter, { alias, prefix = 'TRUE', prefixValues = [] } = {}) => {
      const { rows } = await client.query<{ id: number }>(
        `SELECT id FROM ${schema}.orders ${alias ?? ''} WHERE ${prefix} AND ${filter.text} ORDER BY id`,
        [...prefixValues, ...filter.values],
      );
      return rows.map((row) => row.id);
    },
    intact: async () => {
      const { rows } = await client.query<{ rows: number; canary: boolean }>(
        `SELECT (SELECT count(*)::int FROM ${schema}.orders) AS rows, to_regclass($1) IS NOT NULL AS canary`,
        [`${schema}.canary`],
      );
      return rows[0]!;
    },
  });

  await mariadb.query(
    `CREATE TABLE ${mariadbTable} (id int PRIMARY KEY, tenant varchar(64) NOT NULL, region varchar(16), amount int, paid boolean, note varchar(64)) DEFAULT CHARSET=utf8mb4`,
  );
  await mariadb.query(`CREATE TABLE ${mariadbCanary} (id int)`);
  for (const row of ROWS)
    await mariadb.execute(
      `INSERT INTO ${mariadbTable} VALUES (?, ?, ?, ?, ?, ?)`,
      COLUMNS.map((column) => (typeof row[column] === 'boolean' ? Number(row[column]) : row[column])),
    );
  engines.push({
    dialect: 'mysql',
    table: mariadbTable,
    ids: async (filter, { alias, prefix = 'TRUE', prefixValues = [] } = {}) => {
      const [rows] = await mariadb.execute<mysql.RowDataPacket[]>(
        `SELECT id FROM ${mariadbTable} ${alias ?? ''} WHERE ${prefix} AND ${filter.text} ORDER BY id`,
        [...prefixValues, ...filter.values] as Array<string | number>,
      );
      return rows.map((row) => row.id as number);
    },
    intact: async () => {
      const [rows] = await mariadb.execute<mysql.RowDataPacket[]>(
        `SELECT (SELECT count(*) FROM ${mariadbTable}) AS \`rows\`, ` +
          '(SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?) = 1 AS canary',
        [mariadbCanary],
      );
      return { rows: Number(rows[0]!.rows), canary: rows[0]!.canary === 1 };
    },
  });
}, 60_000);

afterAll(async () => {
  sqlite?.close();
  if (client) {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
  await mariadb.query(`DROP TABLE IF EXISTS ${mariadbTable}, ${mariadbCanary}`);
  await mariadb.end();
});

const SCHEMA_ID = 3;
const forEngine = (engine: Engine, extra: Partial<AccessRulesToSqlOptions> = {}): AccessRulesToSqlOptions => ({
  dialect: engine.dialect,
  table: engine.table,
  schemaId: SCHEMA_ID,
  ...extra,
});
const rulesOf = (
  table: string,
  rules: Array<Pick<ResolvedAccessRule, 'column' | 'op' | 'value'>>,
): ResolvedAccessRule[] => rules.map((rule) => ({ schema_id: SCHEMA_ID, table, ...rule }));

/** Each tenant's rules, using every operator between them; plus rules of another schema and another table, which must not apply. */
function tenantRules(table: string): Record<string, ResolvedAccessRule[]> {
  const elsewhere: ResolvedAccessRule[] = [
    { schema_id: SCHEMA_ID + 1, table, column: 'tenant', op: 'eq', value: 'nobody' },
    { schema_id: SCHEMA_ID, table: `${table}_archive`, column: 'tenant', op: 'in', value: [] },
    { schema_id: SCHEMA_ID, table: table.toUpperCase(), column: 'tenant', op: 'is_null' },
  ];
  return {
    acme: [
      ...rulesOf(table, [
        { column: 'tenant', op: 'eq', value: 'acme' },
        { column: 'amount', op: 'gte', value: 10 },
        { column: 'amount', op: 'lte', value: 30 },
        { column: 'region', op: 'in', value: ['eu', 'us'] },
      ]),
      ...elsewhere,
    ],
    globex: [
      ...elsewhere,
      ...rulesOf(table, [
        { column: 'tenant', op: 'in', value: ['globex'] },
        { column: 'region', op: 'not_in', value: ['us', 'zz'] },
        { column: 'amount', op: 'gt', value: 10 },
        { column: 'amount', op: 'lt', value: 26 },
        { column: 'id', op: 'neq', value: 1 },
      ]),
    ],
    initech: rulesOf(table, [
      { column: 'tenant', op: 'eq', value: 'initech' },
      { column: 'tenant', op: 'not_null' },
      { column: 'note', op: 'not_in', value: [] },
      { column: 'paid', op: 'in', value: [true, false, 'false'] },
      { column: 'note', op: 'is_null' },
    ]),
  };
}

describe.each(['sqlite', 'postgres', 'mysql'] as const)('accessRulesToSql on a real %s database', (dialect) => {
  const engine = () => engines.find((candidate) => candidate.dialect === dialect)!;

  it('gives each of three tenants exactly its own rows', async () => {
    const e = engine();
    const byTenant = tenantRules(e.table);
    // initech's rules add a boolean list and NULL tests: its rows with a note or a NULL `paid` fall out.
    const expected: Record<string, number[]> = { acme: [1, 2, 3], globex: [4, 5], initech: [7] };
    for (const [tenant, rules] of Object.entries(byTenant)) {
      expect(await e.ids(accessRulesToSql(rules, forEngine(e))), tenant).toEqual(expected[tenant]);
      expect(idsWhere((row) => row.tenant === tenant)).toEqual(expect.arrayContaining(expected[tenant]!));
    }
    // Without the narrowing rules, exactly the tenant's rows.
    for (const tenant of ['acme', 'globex', 'initech'])
      expect(
        await e.ids(accessRulesToSql(rulesOf(e.table, [{ column: 'tenant', op: 'eq', value: tenant }]), forEngine(e))),
      ).toEqual(idsWhere((row) => row.tenant === tenant));
  });

  it('gives what SQL says for every operator on text, integer, boolean and nullable columns', async () => {
    const e = engine();
    const cases: Array<Pick<ResolvedAccessRule, 'column' | 'op' | 'value'>> = [
      { column: 'tenant', op: 'eq', value: 'acme' },
      { column: 'region', op: 'eq', value: 'eu' },
      { column: 'amount', op: 'eq', value: 20 },
      { column: 'paid', op: 'eq', value: true },
      { column: 'paid', op: 'eq', value: false },
      { column: 'region', op: 'neq', value: 'eu' },
      { column: 'amount', op: 'neq', value: 20 },
      { column: 'paid', op: 'neq', value: true },
      { column: 'region', op: 'in', value: ['eu', 'apac'] },
      { column: 'amount', op: 'in', value: [5, 50, 999] },
      { column: 'paid', op: 'in', value: [true] },
      { column: 'tenant', op: 'in', value: [] },
      { column: 'region', op: 'not_in', value: ['eu'] },
      { column: 'amount', op: 'not_in', value: [0, 10] },
      { column: 'paid', op: 'not_in', value: [false] },
      { column: 'region', op: 'not_in', value: [] },
      { column: 'amount', op: 'lt', value: 20 },
      { column: 'amount', op: 'lte', value: 20 },
      { column: 'amount', op: 'gt', value: 20 },
      { column: 'amount', op: 'gte', value: 20 },
      { column: 'amount', op: 'gt', value: -1 },
      { column: 'region', op: 'lt', value: 'f' },
      { column: 'region', op: 'gte', value: 'us' },
      { column: 'region', op: 'is_null' },
      { column: 'amount', op: 'is_null' },
      { column: 'paid', op: 'is_null' },
      { column: 'note', op: 'not_null' },
      { column: 'paid', op: 'not_null' },
    ];
    for (const rule of cases)
      expect(await e.ids(accessRulesToSql(rulesOf(e.table, [rule]), forEngine(e))), JSON.stringify(rule)).toEqual(
        idsWhere((row) => holds(row[rule.column as keyof Row], rule)),
      );
  });

  it('fails closed for a table named otherwise, opens it only when asked, and keeps a listed table filtered', async () => {
    const e = engine();
    const rules = tenantRules(e.table).acme!;
    const otherName = { postgres: 'orders', sqlite: 'main.orders', mysql: `test.${e.table}` }[e.dialect];
    expect(await e.ids(accessRulesToSql(rules, forEngine(e, { table: otherName })))).toEqual([]);
    expect(await e.ids(accessRulesToSql(rules, forEngine(e, { schemaId: SCHEMA_ID + 2 })))).toEqual([]);
    expect(await e.ids(accessRulesToSql([], forEngine(e)))).toEqual([]);
    expect(await e.ids(accessRulesToSql(rules, forEngine(e, { table: otherName, unlisted: 'allow' })))).toEqual(
      ROWS.map((row) => row.id),
    );
    expect(await e.ids(accessRulesToSql(rules, forEngine(e, { unlisted: 'allow' })))).toEqual([1, 2, 3]);
  });

  it("follows an alias and the query's own parameters", async () => {
    const e = engine();
    const rules = rulesOf(e.table, [{ column: 'tenant', op: 'in', value: ['acme', 'globex'] }]);
    const filter = accessRulesToSql(rules, forEngine(e, { alias: 'o', firstParameter: 2 }));
    const prefix = e.dialect === 'postgres' ? 'o.amount >= $1' : 'o.amount >= ?';
    expect(await e.ids(filter, { alias: 'o', prefix, prefixValues: [20] })).toEqual([2, 3, 5]);
  });

  it('reads values crafted as SQL as data: each matches its own row only, and the tables stay as they were', async () => {
    const e = engine();
    const crafted = ROWS.filter((row) => row.id >= 100);
    for (const row of crafted) {
      for (const column of ['tenant', 'note'] as const)
        expect(
          await e.ids(accessRulesToSql(rulesOf(e.table, [{ column, op: 'eq', value: row.tenant }]), forEngine(e))),
          row.tenant,
        ).toEqual([row.id]);
      expect(
        await e.ids(
          accessRulesToSql(rulesOf(e.table, [{ column: 'tenant', op: 'neq', value: row.tenant }]), forEngine(e)),
        ),
      ).toEqual(idsWhere((other) => other.id !== row.id));
    }
    const all = rulesOf(e.table, [{ column: 'tenant', op: 'in', value: CRAFTED }]);
    expect(await e.ids(accessRulesToSql(all, forEngine(e)))).toEqual(crafted.map((row) => row.id));
    const none = rulesOf(e.table, [{ column: 'note', op: 'not_in', value: CRAFTED }]);
    expect(await e.ids(accessRulesToSql(none, forEngine(e)))).toEqual([2, 4, 6]);
    expect(await e.intact()).toEqual({ rows: ROWS.length, canary: true });
  });

  it('reads SQL in a value for an integer or boolean column as a value of the wrong type: no rows, or an error', async () => {
    const e = engine();
    for (const [column, value] of [
      ['amount', '0 OR 1=1'],
      ['amount', '1; DROP TABLE canary'],
      ['paid', "true' OR '1'='1"],
      ['id', '1 UNION SELECT id FROM canary'],
    ] as const) {
      const filter = accessRulesToSql(rulesOf(e.table, [{ column, op: 'eq', value }]), forEngine(e));
      if (e.dialect !== 'postgres') expect(await e.ids(filter)).toEqual([]);
      // PostgreSQL parses the parameter as the column's type and refuses it (22P02: invalid text representation).
      else await expect(e.ids(filter)).rejects.toMatchObject({ code: '22P02' });
    }
    expect(await e.intact()).toEqual({ rows: ROWS.length, canary: true });
  });

  it('refuses names that are not identifiers before any SQL, and a rule naming a column the table lacks is an error, never rows', async () => {
    const e = engine();
    const names = ['tenant; DROP TABLE canary', 'tenant" OR "1"="1', 'tenant--', 'ｔenant', 'tenant`', '1=1'];
    for (const name of names) {
      expect(() => accessRulesToSql(rulesOf(e.table, [{ column: name, op: 'not_null' }]), forEngine(e))).toThrow(
        AccessRuleError,
      );
      expect(() => accessRulesToSql([], forEngine(e, { table: name }))).toThrow(AccessRuleError);
      expect(() => accessRulesToSql([], forEngine(e, { alias: name }))).toThrow(AccessRuleError);
    }
    // A misspelt column (here: one that exists in no table) errors on every engine; SQLite does not take
    // the qualified, double-quoted name for a string literal.
    for (const op of ['neq', 'not_in'] as const) {
      const value = op === 'neq' ? 'x' : ['x'];
      const filter = accessRulesToSql(rulesOf(e.table, [{ column: 'tenant_id', op, value }]), forEngine(e));
      await expect(e.ids(filter)).rejects.toThrow(/tenant_id/);
    }
    expect(await e.intact()).toEqual({ rows: ROWS.length, canary: true });
  });
});

type Case = Pick<ResolvedAccessRule, 'column' | 'op' | 'value'>;

/** Look-alikes, numbers against text, strings against numbers, mixed lists, booleans, strings ordered. */
const LOOK_ALIKE_CASES: Case[] = [
  ...['acme', 'ACME', 'Acme', 'acme ', ' acme', 'ácme', 'Åcme', 'acmé', 'ａcme', '', '0', 'true'].map(
    (value): Case => ({ column: 'tenant', op: 'eq', value }),
  ),
  ...[0, 1, 0.0, -0, 10, 1.5, true, false].map((value): Case => ({ column: 'tenant', op: 'eq', value })),
  { column: 'tenant', op: 'neq', value: 'acme' },
  { column: 'tenant', op: 'neq', value: 0 },
  { column: 'tenant', op: 'neq', value: false },
  { column: 'tenant', op: 'in', value: ['acme', 0] },
  { column: 'tenant', op: 'in', value: [0] },
  { column: 'tenant', op: 'in', value: ['0', 0, '00'] },
  { column: 'tenant', op: 'in', value: ['ACME', true] },
  { column: 'tenant', op: 'in', value: [false, 1, 'Åcme'] },
  { column: 'tenant', op: 'not_in', value: ['acme', 0] },
  { column: 'tenant', op: 'not_in', value: [true, false] },
  { column: 'tenant', op: 'lt', value: 'acme' },
  { column: 'tenant', op: 'lte', value: 'ACME' },
  { column: 'tenant', op: 'gt', value: 'acme' },
  { column: 'tenant', op: 'gte', value: 'ácme' },
  { column: 'tenant', op: 'lt', value: 'B' },
  { column: 'tenant', op: 'gt', value: 'a' },
  { column: 'tenant', op: 'gte', value: 'acme ' },
  { column: 'tenant', op: 'lt', value: 0 },
  { column: 'tenant', op: 'gt', value: 1 },
  { column: 'tenant', op: 'lt', value: true },
  { column: 'note', op: 'eq', value: 0 },
  { column: 'note', op: 'lt', value: 'm' },
  { column: 'note', op: 'not_in', value: [0, 'rush'] },
  { column: 'region', op: 'gt', value: 'US' },
  // Strings against an integer column: a plain decimal number compares as one, anything else matches nothing.
  ...['0', '20', '+20', '020', '1e1', 'acme', '', '0 OR 1=1', '20abc'].map((value): Case => ({
    column: 'amount',
    op: 'eq',
    value,
  })),
  { column: 'amount', op: 'neq', value: 'acme' },
  { column: 'amount', op: 'lt', value: '25' },
  { column: 'amount', op: 'gte', value: '5' },
  { column: 'amount', op: 'lt', value: 'abc' },
  { column: 'amount', op: 'gt', value: 'acme' },
  { column: 'amount', op: 'in', value: ['acme', 0] },
  { column: 'amount', op: 'in', value: ['10', 20, '1e1'] },
  { column: 'amount', op: 'not_in', value: ['acme', 0] },
  { column: 'amount', op: 'not_in', value: ['10', 20] },
  { column: 'amount', op: 'lte', value: 0 },
  // Booleans on a boolean column, and numbers there.
  { column: 'paid', op: 'eq', value: true },
  { column: 'paid', op: 'eq', value: false },
  { column: 'paid', op: 'neq', value: true },
  { column: 'paid', op: 'in', value: [true] },
  { column: 'paid', op: 'not_in', value: [false] },
  { column: 'paid', op: 'eq', value: 1 },
  { column: 'paid', op: 'eq', value: 2 },
];

/**
 * What PostgreSQL matches; where it refuses the query (a value that is not of the column's type,
 * 22P02), the rows of the values that are: none, or for `in` those of its other values.
 */
async function postgresMatches(engine: Engine, rule: Case): Promise<number[]> {
  try {
    return await engine.ids(accessRulesToSql(rulesOf(engine.table, [rule]), forEngine(engine)));
  } catch (error) {
    expect(error, JSON.stringify(rule)).toMatchObject({ code: '22P02' });
    if (rule.op !== 'in') return [];
    const each = await Promise.all(
      (rule.value as Scalar[]).map((value) => postgresMatches(engine, { ...rule, op: 'eq', value })),
    );
    return [...new Set(each.flat())].sort((a, b) => a - b);
  }
}

describe('every dialect matches what PostgreSQL matches', () => {
  const byDialect = (dialect: Engine['dialect']) => engines.find((candidate) => candidate.dialect === dialect)!;
  const idOf = (tenant: string) => ROWS.find((row) => row.tenant === tenant)!.id;

  it('on PostgreSQL, strings compare exactly and a number with text as its text', async () => {
    const e = byDialect('postgres');
    const ids = (rule: Case) => e.ids(accessRulesToSql(rulesOf(e.table, [rule]), forEngine(e)));
    expect(await ids({ column: 'tenant', op: 'eq', value: 'acme' })).toEqual([1, 2, 3]);
    expect(await ids({ column: 'tenant', op: 'eq', value: 'Åcme' })).toEqual([idOf('Åcme')]);
    expect(await ids({ column: 'tenant', op: 'eq', value: 0 })).toEqual([idOf('0')]);
    expect(await ids({ column: 'tenant', op: 'eq', value: false })).toEqual([idOf('false')]);
    expect(await ids({ column: 'tenant', op: 'in', value: ['acme', 0] })).toEqual([1, 2, 3, idOf('0')]);
  });

  it.each(['sqlite', 'mysql'] as const)(
    '%s: look-alikes, numbers and text, mixed lists, booleans and string order',
    async (dialect) => {
      const reference = byDialect('postgres');
      const e = byDialect(dialect);
      for (const rule of LOOK_ALIKE_CASES)
        expect(
          await e.ids(accessRulesToSql(rulesOf(e.table, [rule]), forEngine(e))),
          `${JSON.stringify(rule)} on ${dialect}`,
        ).toEqual(await postgresMatches(reference, rule));
    },
  );

  it("MariaDB's table compares case- and accent-insensitively by default: the filter, not the table, makes it exact", async () => {
    const [rows] = await mariadb.execute<mysql.RowDataPacket[]>(
      'SELECT collation_name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name = ?',
      [mariadbTable, 'tenant'],
    );
    expect(rows[0]!.collation_name).toMatch(/^utf8mb4_.*_ci$/);
    const [loose] = await mariadb.execute<mysql.RowDataPacket[]>(
      `SELECT count(*) AS n FROM ${mariadbTable} WHERE tenant = ?`,
      ['acme'],
    );
    expect(Number(loose[0]!.n)).toBeGreaterThan(3);
  });

  it.each(['sqlite', 'mysql'] as const)(
    '%s: where it differs, as documented: a boolean is 1 or 0 on a numeric column, a string never matches a number',
    async (dialect) => {
      const e = byDialect(dialect);
      const ids = (rule: Case) => e.ids(accessRulesToSql(rulesOf(e.table, [rule]), forEngine(e)));
      // PostgreSQL refuses a boolean for an integer column; these store booleans as the integers 1 and 0.
      expect(await ids({ column: 'amount', op: 'eq', value: false })).toEqual(idsWhere((row) => row.amount === 0));
      // PostgreSQL reads 'true' as a boolean for a boolean column; here a string that is not a number
      // never matches a numeric column, which is what a boolean column is.
      expect(await ids({ column: 'paid', op: 'eq', value: 'true' })).toEqual([]);
      expect(await ids({ column: 'paid', op: 'in', value: [true, 'false'] })).toEqual(
        idsWhere((row) => row.paid === true),
      );
    },
  );
});

/** SQL's semantics for one rule on one cell: a NULL satisfies only is_null; an empty in is false, an empty not_in true. */
function holds(cell: Cell, rule: Pick<ResolvedAccessRule, 'op' | 'value'>): boolean {
  const { op, value } = rule;
  if (op === 'is_null') return cell === null;
  if (op === 'not_null') return cell !== null;
  if (op === 'in') return cell !== null && (value as Cell[]).includes(cell);
  if (op === 'not_in') return (value as Cell[]).length === 0 || (cell !== null && !(value as Cell[]).includes(cell));
  if (cell === null) return false;
  const other = value as string | number | boolean;
  switch (op) {
    case 'eq':
      return cell === other;
    case 'neq':
      return cell !== other;
    case 'lt':
      return cell < other;
    case 'lte':
      return cell <= other;
    case 'gt':
      return cell > other;
    case 'gte':
      return cell >= other;
  }
  throw new Error(`no such operator: ${op}`);
}
