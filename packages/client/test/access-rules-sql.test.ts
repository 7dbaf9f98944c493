// accessRulesToSql (docs/api.md#access-rules) as text and parameters: every operator in every dialect, the
// rules that apply (exact table, schema), failing closed, identifiers checked again and quoted, values
// only ever parameters. test/access-rules-sql.databases.test.ts runs the filters on real databases.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  accessRulesToSql,
  AccessRuleError,
  type AccessRulesToSqlOptions,
  type ResolvedAccessRule,
  type SqlDialect,
} from '../src/index.js';

const rule = (fields: Partial<ResolvedAccessRule> & Pick<ResolvedAccessRule, 'op'>): ResolvedAccessRule => ({
  schema_id: 7,
  table: 'orders',
  column: 'region',
  ...fields,
});
const on = (dialect: SqlDialect, extra: Partial<AccessRulesToSqlOptions> = {}): AccessRulesToSqlOptions => ({
  dialect,
  table: 'orders',
  schemaId: 7,
  ...extra,
});

/** What accessRulesToSql throws for these rules and options: the AccessRuleError's field. */
function refusal(rules: unknown, options: AccessRulesToSqlOptions): string {
  try {
    accessRulesToSql(rules as ResolvedAccessRule[], options);
  } catch (error) {
    expect(error).toBeInstanceOf(AccessRuleError);
    return (error as AccessRuleError).field;
  }
  throw new Error('accessRulesToSql accepted it');
}

/** What keeps a string that is not a number from matching a numeric column (MySQL has no pg_typeof). */
const mysqlNotNumeric = (column: string) =>
  `(CHARSET(${column}) <> 'binary' OR CONVERT(${column} USING utf8mb4) NOT REGEXP '^[-+]?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]+)?$')`;
const sqliteNotNumeric = (column: string) => `typeof(${column}) NOT IN ('integer', 'real')`;
const MYSQL_NOT_NUMERIC = mysqlNotNumeric('`orders`.`region`');
const SQLITE_NOT_NUMERIC = sqliteNotNumeric('"orders"."region"');

describe('accessRulesToSql, one rule of each operator', () => {
  const cases: Array<[ResolvedAccessRule, Record<SqlDialect, [string, unknown[]]>]> = [
    [
      rule({ op: 'eq', value: 'eu' }),
      {
        postgres: ['("orders"."region" = $1)', ['eu']],
        sqlite: [`("orders"."region" COLLATE BINARY = ? AND ${SQLITE_NOT_NUMERIC})`, ['eu']],
        mysql: [`(\`orders\`.\`region\` = CAST(? AS BINARY) AND ${MYSQL_NOT_NUMERIC})`, ['eu']],
      },
    ],
    [
      rule({ op: 'neq', value: 3 }),
      {
        postgres: ['("orders"."region" <> $1)', [3]],
        sqlite: ['("orders"."region" <> +CAST(? AS INTEGER))', [3]],
        mysql: ['(`orders`.`region` <> CAST(? AS BINARY))', ['3']],
      },
    ],
    [
      rule({ op: 'lt', value: 2.5 }),
      {
        postgres: ['("orders"."region" < $1)', [2.5]],
        sqlite: ['("orders"."region" < ?)', [2.5]],
        mysql: ['(`orders`.`region` < CAST(? AS BINARY))', ['2.5']],
      },
    ],
    [
      rule({ op: 'lte', value: 'm' }),
      {
        postgres: ['("orders"."region" <= $1)', ['m']],
        sqlite: [`("orders"."region" COLLATE BINARY <= ? AND ${SQLITE_NOT_NUMERIC})`, ['m']],
        mysql: [`(\`orders\`.\`region\` <= CAST(? AS BINARY) AND ${MYSQL_NOT_NUMERIC})`, ['m']],
      },
    ],
    [
      rule({ op: 'gt', value: -1 }),
      {
        postgres: ['("orders"."region" > $1)', [-1]],
        sqlite: ['("orders"."region" > +CAST(? AS INTEGER))', [-1]],
        mysql: ['(`orders`.`region` > CAST(? AS BINARY))', ['-1']],
      },
    ],
    [
      rule({ op: 'gte', value: 0 }),
      {
        postgres: ['("orders"."region" >= $1)', [0]],
        sqlite: ['("orders"."region" >= +CAST(? AS INTEGER))', [0]],
        mysql: ['(`orders`.`region` >= CAST(? AS BINARY))', ['0']],
      },
    ],
    [
      rule({ op: 'in', value: ['eu', 'us', 'apac'] }),
      {
        postgres: ['("orders"."region" = ANY($1))', [['eu', 'us', 'apac']]],
        sqlite: [`("orders"."region" COLLATE BINARY IN (?, ?, ?) AND ${SQLITE_NOT_NUMERIC})`, ['eu', 'us', 'apac']],
        mysql: [
          `(\`orders\`.\`region\` IN (CAST(? AS BINARY), CAST(? AS BINARY), CAST(? AS BINARY)) AND ${MYSQL_NOT_NUMERIC})`,
          ['eu', 'us', 'apac'],
        ],
      },
    ],
    [
      rule({ op: 'not_in', value: [1, 2] }),
      {
        postgres: ['("orders"."region" <> ALL($1))', [[1, 2]]],
        sqlite: ['("orders"."region" NOT IN (+CAST(? AS INTEGER), +CAST(? AS INTEGER)))', [1, 2]],
        mysql: ['(`orders`.`region` NOT IN (CAST(? AS BINARY), CAST(? AS BINARY)))', ['1', '2']],
      },
    ],
    [rule({ op: 'in', value: [] }), { postgres: ['(FALSE)', []], sqlite: ['(FALSE)', []], mysql: ['(FALSE)', []] }],
    [rule({ op: 'not_in', value: [] }), { postgres: ['(TRUE)', []], sqlite: ['(TRUE)', []], mysql: ['(TRUE)', []] }],
    [
      rule({ op: 'is_null' }),
      {
        postgres: ['("orders"."region" IS NULL)', []],
        sqlite: ['("orders"."region" IS NULL)', []],
        mysql: ['(`orders`.`region` IS NULL)', []],
      },
    ],
    [
      rule({ op: 'not_null' }),
      {
        postgres: ['("orders"."region" IS NOT NULL)', []],
        sqlite: ['("orders"."region" IS NOT NULL)', []],
        mysql: ['(`orders`.`region` IS NOT NULL)', []],
      },
    ],
  ];

  for (const [given, expected] of cases) {
    for (const dialect of ['postgres', 'sqlite', 'mysql'] as const) {
      it(`${given.op} ${JSON.stringify(given.value)} on ${dialect}`, () => {
        const [text, values] = expected[dialect];
        expect(accessRulesToSql([given], on(dialect))).toEqual({ text, values });
      });
    }
  }

  it('binds booleans as booleans on PostgreSQL; elsewhere as 1 or 0 for a numeric column, the text for a text column', () => {
    const rules = [
      rule({ column: 'paid', op: 'eq', value: true }),
      rule({ column: 'open', op: 'in', value: [false, true] }),
    ];
    expect(accessRulesToSql(rules, on('postgres'))).toEqual({
      text: '("orders"."paid" = $1 AND "orders"."open" = ANY($2))',
      values: [true, [false, true]],
    });
    const sqlite = (column: string) => `(CASE WHEN typeof("orders"."${column}") <> 'text' THEN ? ELSE ? END)`;
    expect(accessRulesToSql(rules, on('sqlite'))).toEqual({
      text: `("orders"."paid" COLLATE BINARY = ${sqlite('paid')} AND "orders"."open" COLLATE BINARY IN (${sqlite('open')}, ${sqlite('open')}))`,
      values: [1, 'true', 0, 'false', 1, 'true'],
    });
    const mysql = (column: string) => `CAST(IF(CHARSET(\`orders\`.\`${column}\`) = 'binary', ?, ?) AS BINARY)`;
    expect(accessRulesToSql(rules, on('mysql'))).toEqual({
      text: `(\`orders\`.\`paid\` = ${mysql('paid')} AND \`orders\`.\`open\` IN (${mysql('open')}, ${mysql('open')}))`,
      values: ['1', 'true', '0', 'false', '1', 'true'],
    });
  });

  it('compares a mixed list by kind: numbers as the column converts them, booleans, then strings that never match a number', () => {
    const mixed = [rule({ op: 'in', value: ['acme', 0, '12', true] }), rule({ op: 'not_in', value: ['x', 1] })];
    expect(accessRulesToSql(mixed, on('mysql'))).toEqual({
      text:
        "((`orders`.`region` IN (CAST(? AS BINARY), CAST(? AS BINARY)) OR `orders`.`region` IN (CAST(IF(CHARSET(`orders`.`region`) = 'binary', ?, ?) AS BINARY))" +
        ` OR (\`orders\`.\`region\` IN (CAST(? AS BINARY)) AND ${MYSQL_NOT_NUMERIC}))` +
        ` AND \`orders\`.\`region\` NOT IN (CAST(? AS BINARY)) AND \`orders\`.\`region\` NOT IN (CAST(? AS BINARY)) AND ${MYSQL_NOT_NUMERIC})`,
      values: ['0', '12', '1', 'true', 'acme', '1', 'x'],
    });
    expect(accessRulesToSql(mixed, on('sqlite'))).toEqual({
      text:
        `(("orders"."region" IN (+CAST(? AS INTEGER), ?) OR "orders"."region" COLLATE BINARY IN ((CASE WHEN typeof("orders"."region") <> 'text' THEN ? ELSE ? END))` +
        ` OR ("orders"."region" COLLATE BINARY IN (?) AND ${SQLITE_NOT_NUMERIC}))` +
        ` AND "orders"."region" NOT IN (+CAST(? AS INTEGER)) AND "orders"."region" COLLATE BINARY NOT IN (?) AND ${SQLITE_NOT_NUMERIC})`,
      values: [0, '12', 1, 'true', 'acme', 1, 'x'],
    });
  });
});

describe('accessRulesToSql, the rules that apply', () => {
  const rules: ResolvedAccessRule[] = [
    rule({ column: 'tenant', op: 'eq', value: 'acme' }),
    rule({ table: 'Orders', column: 'a', op: 'eq', value: 1 }),
    rule({ table: 'sales.orders', column: 'b', op: 'eq', value: 2 }),
    rule({ schema_id: 8, column: 'c', op: 'eq', value: 3 }),
    rule({ column: 'region', op: 'in', value: ['eu', 'us'] }),
    rule({ column: 'deleted_at', op: 'is_null' }),
    rule({ column: 'amount', op: 'lt', value: 100 }),
  ];

  it("joins the schema's rules of exactly that table with AND, numbering PostgreSQL's parameters in order", () => {
    expect(accessRulesToSql(rules, on('postgres'))).toEqual({
      text: '("orders"."tenant" = $1 AND "orders"."region" = ANY($2) AND "orders"."deleted_at" IS NULL AND "orders"."amount" < $3)',
      values: ['acme', ['eu', 'us'], 100],
    });
    expect(accessRulesToSql(rules, on('sqlite'))).toEqual({
      text:
        `("orders"."tenant" COLLATE BINARY = ? AND ${sqliteNotNumeric('"orders"."tenant"')}` +
        ` AND "orders"."region" COLLATE BINARY IN (?, ?) AND ${SQLITE_NOT_NUMERIC}` +
        ' AND "orders"."deleted_at" IS NULL AND "orders"."amount" < +CAST(? AS INTEGER))',
      values: ['acme', 'eu', 'us', 100],
    });
  });

  it('matches the table exactly: case and qualification make another table', () => {
    expect(accessRulesToSql(rules, on('postgres', { table: 'Orders' }))).toEqual({
      text: '("Orders"."a" = $1)',
      values: [1],
    });
    expect(accessRulesToSql(rules, on('mysql', { table: 'sales.orders' }))).toEqual({
      text: '(`sales`.`orders`.`b` = CAST(? AS BINARY))',
      values: ['2'],
    });
    expect(accessRulesToSql(rules, on('sqlite', { schemaId: 8 }))).toEqual({
      text: '("orders"."c" = +CAST(? AS INTEGER))',
      values: [3],
    });
  });

  it('fails closed: a table or schema no rule names is FALSE, TRUE only when unlisted tables are allowed', () => {
    for (const dialect of ['postgres', 'sqlite', 'mysql'] as const) {
      for (const options of [{ table: 'ORDERS' }, { table: 'public.orders' }, { table: 'order' }, { schemaId: 9 }]) {
        expect(accessRulesToSql(rules, on(dialect, options))).toEqual({ text: 'FALSE', values: [] });
        expect(accessRulesToSql(rules, on(dialect, { ...options, unlisted: 'deny' }))).toEqual({
          text: 'FALSE',
          values: [],
        });
        expect(accessRulesToSql(rules, on(dialect, { ...options, unlisted: 'allow' }))).toEqual({
          text: 'TRUE',
          values: [],
        });
      }
      expect(accessRulesToSql([], on(dialect))).toEqual({ text: 'FALSE', values: [] });
    }
    // A listed table keeps its rules under `allow`.
    expect(accessRulesToSql(rules, on('sqlite', { table: 'Orders', unlisted: 'allow' })).text).toBe(
      '("Orders"."a" = +CAST(? AS INTEGER))',
    );
  });

  it('qualifies the columns with the alias when given, and starts PostgreSQL numbering where asked', () => {
    const two = [
      rule({ column: 'tenant', op: 'eq', value: 'acme' }),
      rule({ column: 'region', op: 'in', value: ['eu'] }),
    ];
    expect(accessRulesToSql(two, on('postgres', { alias: 'o', firstParameter: 3 }))).toEqual({
      text: '("o"."tenant" = $3 AND "o"."region" = ANY($4))',
      values: ['acme', ['eu']],
    });
    expect(accessRulesToSql(two, on('mysql', { alias: 'o', firstParameter: 3 }))).toEqual({
      text:
        `(\`o\`.\`tenant\` = CAST(? AS BINARY) AND ${mysqlNotNumeric('`o`.`tenant`')}` +
        ` AND \`o\`.\`region\` IN (CAST(? AS BINARY)) AND ${mysqlNotNumeric('`o`.`region`')})`,
      values: ['acme', 'eu'],
    });
  });

  it('checks every rule of the token, those of other tables too', () => {
    const bad = [...rules, rule({ table: 'elsewhere', column: 'x; DROP TABLE orders', op: 'eq', value: 1 })];
    expect(refusal(bad, on('postgres'))).toBe('rules[7].column');
  });
});

describe('accessRulesToSql, values never written into the text', () => {
  const crafted = [
    "' OR 1=1 --",
    "'; DROP TABLE orders; --",
    '" OR ""="',
    '/* comment */ 1',
    '\\',
    "\\'; SELECT 1; --",
    '＇ OR 1=1 --', // fullwidth apostrophe
    'ʼ OR ʼ1ʼ=ʼ1', // modifier letter apostrophe
    '$1',
    '?',
    '`orders`',
    '\u2028\n\r\t',
  ];

  it.each(['postgres', 'sqlite', 'mysql'] as const)(
    '%s: every crafted value is a parameter, the text only placeholders',
    (dialect) => {
      const rules = [
        ...crafted.map((value) => rule({ column: 'tenant', op: 'eq', value })),
        rule({ column: 'tenant', op: 'in', value: crafted }),
        rule({ column: 'tenant', op: 'not_in', value: crafted }),
      ];
      const { text, values } = accessRulesToSql(rules, on(dialect));
      // The text is the one plain values of the same kind give: the values never shape it.
      const plain = rules.map((given) => ({
        ...given,
        value: Array.isArray(given.value) ? given.value.map(() => 'v') : 'v',
      }));
      expect(text).toBe(accessRulesToSql(plain, on(dialect)).text);
      if (dialect === 'postgres') {
        const condition = '"orders"\\."tenant" (= \\$\\d+|= ANY\\(\\$\\d+\\)|<> ALL\\(\\$\\d+\\))';
        expect(text).toMatch(new RegExp(`^\\(${condition}( AND ${condition})*\\)$`));
      }
      expect(values.flat()).toEqual([...crafted, ...crafted, ...crafted]);
      // PostgreSQL binds each list as one array parameter; the others one parameter a value.
      expect(values).toHaveLength(dialect === 'postgres' ? crafted.length + 2 : crafted.length * 3);
    },
  );
});

describe('accessRulesToSql refuses what it cannot write safely', () => {
  const notIdentifiers = [
    '',
    '1orders',
    'orders; DROP TABLE orders',
    'orders"',
    'orders`',
    'orders --',
    'or ders',
    'ｏrders', // fullwidth o
    'orders\u200b', // zero-width space
    'orderś',
    'a'.repeat(64),
    '$1',
  ];

  it.each(notIdentifiers)('a column %j', (column) => {
    expect(refusal([rule({ column, op: 'eq', value: 1 })], on('postgres'))).toBe('rules[0].column');
  });

  it.each([...notIdentifiers, 'a.b.c', '.orders', 'orders.', 'sales..orders', 'sales.orders;'])(
    'a table %j',
    (table) => {
      expect(refusal([rule({ table, op: 'eq', value: 1 })], on('sqlite'))).toBe('rules[0].table');
      expect(refusal([], on('mysql', { table }))).toBe('options.table');
    },
  );

  it.each([...notIdentifiers, 'a.b'])('an alias %j', (alias) => {
    expect(refusal([], on('postgres', { alias }))).toBe('options.alias');
  });

  it('accepts the longest identifiers (63 characters) and a table qualified once', () => {
    const long = `_${'A9'.repeat(31)}`;
    expect(long).toHaveLength(63);
    expect(
      accessRulesToSql(
        [rule({ table: `${long}.${long}`, column: long, op: 'not_null' })],
        on('postgres', { table: `${long}.${long}` }),
      ).text,
    ).toBe(`("${long}"."${long}"."${long}" IS NOT NULL)`);
  });

  it('values of the wrong shape for their operator', () => {
    const wrong: Array<[Partial<ResolvedAccessRule> & { op: ResolvedAccessRule['op'] }, string]> = [
      [{ op: 'eq' }, 'rules[0].value'],
      [{ op: 'eq', value: null as unknown as string }, 'rules[0].value'],
      [{ op: 'eq', value: ['a'] }, 'rules[0].value'],
      [{ op: 'lt', value: Number.NaN }, 'rules[0].value'],
      [{ op: 'gte', value: Number.POSITIVE_INFINITY }, 'rules[0].value'],
      [{ op: 'neq', value: { a: 1 } as unknown as string }, 'rules[0].value'],
      [{ op: 'in', value: 'a' }, 'rules[0].value'],
      [{ op: 'in', value: [['a']] as unknown as string[] }, 'rules[0].value'],
      [{ op: 'not_in', value: [null] as unknown as string[] }, 'rules[0].value'],
      [{ op: 'in', value: Array.from({ length: 1001 }, (_, index) => index) }, 'rules[0].value'],
      [{ op: 'is_null', value: 'x' }, 'rules[0].value'],
      [{ op: 'not_null', value: false }, 'rules[0].value'],
      [{ op: 'like' as 'eq', value: '%' }, 'rules[0].op'],
      [{ op: 'EQ' as 'eq', value: 'a' }, 'rules[0].op'],
      [{ op: 'eq', value: 'a', schema_id: 0 }, 'rules[0].schema_id'],
      [{ op: 'eq', value: 'a', schema_id: '7' as unknown as number }, 'rules[0].schema_id'],
    ];
    for (const [fields, field] of wrong)
      expect(refusal([rule(fields)], on('postgres')), JSON.stringify(fields)).toBe(field);
    expect(
      accessRulesToSql([rule({ op: 'in', value: Array.from({ length: 1000 }, (_, index) => index) })], on('sqlite'))
        .values,
    ).toHaveLength(1000);
  });

  it('an unresolved property reference, saying where resolved rules come from', () => {
    const unresolved = { schema_id: 7, table: 'orders', column: 'tenant', op: 'eq', value: { property: 'tenant' } };
    expect(refusal([unresolved], on('sqlite'))).toBe('rules[0].value');
    expect(() => accessRulesToSql([unresolved] as unknown as ResolvedAccessRule[], on('sqlite'))).toThrow(
      /ugs\.access_rules/,
    );
  });

  it('rules that are not an array of objects, and options out of their range', () => {
    expect(refusal(undefined, on('postgres'))).toBe('rules');
    expect(refusal({ 0: rule({ op: 'is_null' }) }, on('postgres'))).toBe('rules');
    expect(refusal([null], on('postgres'))).toBe('rules[0]');
    expect(refusal([rule({ op: 'is_null' }), 'orders'], on('postgres'))).toBe('rules[1]');
    expect(refusal([], { ...on('postgres'), dialect: 'mssql' as SqlDialect })).toBe('options.dialect');
    expect(refusal([], on('postgres', { schemaId: 0 }))).toBe('options.schemaId');
    expect(refusal([], on('postgres', { schemaId: 1.5 }))).toBe('options.schemaId');
    expect(refusal([], on('postgres', { unlisted: 'yes' as 'allow' }))).toBe('options.unlisted');
    expect(refusal([], on('postgres', { firstParameter: 0 }))).toBe('options.firstParameter');
  });
});

describe('the module', () => {
  it('imports nothing of Node and no runtime module but the leaf of constants (it runs in browsers)', () => {
    const source = readFileSync(new URL('../src/access-rules-sql.ts', import.meta.url), 'utf8');
    const imports = [...source.matchAll(/^import (type )?[^;]*? from '([^']+)';/gms)].map(
      ([, type, from]) => `${type ?? ''}${from}`,
    );
    expect(imports).toEqual([
      'type ../../../src/wire/access-rules.schemas.js',
      '../../../src/wire/contract.constants.js',
    ]);
    expect(readFileSync(new URL('../../../src/wire/contract.constants.ts', import.meta.url), 'utf8')).not.toMatch(
      /^import /m,
    );
  });
});
