/*
 * An embed token's access rules (docs/api.md#access-rules) as a parameterised SQL filter for a renderer's query. Pure:
 * no I/O and nothing of Node, so it runs the same in a server, a worker or a browser.
 */
import type { ResolvedAccessRule } from '../../../src/wire/access-rules.schemas.js';
import {
  ACCESS_RULE_IDENTIFIER,
  ACCESS_RULE_LIST_OPERATORS,
  ACCESS_RULE_NULL_TEST_OPERATORS,
  ACCESS_RULE_OPERATORS,
  ACCESS_RULE_TABLE,
  MAX_ACCESS_RULE_VALUES,
} from '../../../src/wire/contract.constants.js';

export type SqlDialect = 'postgres' | 'mysql' | 'sqlite';

/** A value to bind: a scalar, or (PostgreSQL only) the one array parameter of an `in`/`not_in` list. */
export type SqlParameter = string | number | boolean | Array<string | number | boolean>;

export interface AccessRulesToSqlOptions {
  dialect: SqlDialect;
  /**
   * The table the query reads, written exactly as the rules name it: `orders` and `sales.orders` are
   * different tables, and so are `Orders` and `orders`. The columns are qualified with it.
   */
  table: string;
  /** The schema (the service's catalogue id) the query's data source follows. */
  schemaId: number;
  /**
   * What a table that no rule of the schema names gives: `'deny'` (the default) no rows (`FALSE`),
   * `'allow'` every row (`TRUE`). Deny is why a misspelt or differently qualified name never shows
   * every row.
   */
  unlisted?: 'deny' | 'allow';
  /** The alias the query gives the table (`FROM sales.orders o`): the columns are qualified with it instead. */
  alias?: string;
  /**
   * PostgreSQL: the number of the first placeholder (default 1), so that the filter can follow the
   * query's own parameters (`$1`…`$k`, then the filter's from `$k+1`). MySQL's and SQLite's `?` are
   * numbered by their position, so there it changes nothing: put `values` where the text goes.
   */
  firstParameter?: number;
}

/** A condition to AND into a WHERE clause (one parenthesised condition, or `TRUE`/`FALSE`), and its parameters in order. */
export interface SqlFilter {
  text: string;
  values: SqlParameter[];
}

/** The rules or the options are not what accessRulesToSql can turn into SQL safely; `field` says where. */
export class AccessRuleError extends Error {
  override readonly name = 'AccessRuleError';
  constructor(
    message: string,
    /** `rules[<index>].<field>`, or `options.<option>`. */
    readonly field: string,
  ) {
    super(message);
  }
}

type Scalar = string | number | boolean;
type Operator = (typeof ACCESS_RULE_OPERATORS)[number];

const IDENTIFIER = new RegExp(ACCESS_RULE_IDENTIFIER);
const TABLE = new RegExp(ACCESS_RULE_TABLE);
const OPERATORS: ReadonlySet<string> = new Set(ACCESS_RULE_OPERATORS);
const LIST_OPERATORS: ReadonlySet<string> = new Set(ACCESS_RULE_LIST_OPERATORS);
const NULL_TEST_OPERATORS: ReadonlySet<string> = new Set(ACCESS_RULE_NULL_TEST_OPERATORS);
const COMPARISONS: Partial<Record<Operator, string>> = { eq: '=', neq: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=' };

const isScalar = (value: unknown): value is Scalar =>
  typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));

const kindOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value);

/** One rule, checked as docs/api.md#access-rules shapes it: the identifiers, the operator, and the value the operator takes. */
function checkedRule(rule: unknown, index: number): ResolvedAccessRule {
  const at = (field: string) => `rules[${index}]${field === '' ? '' : `.${field}`}`;
  if (typeof rule !== 'object' || rule === null || Array.isArray(rule))
    throw new AccessRuleError(`An access rule is an object, not ${kindOf(rule)}.`, at(''));
  const { schema_id, table, column, op, value } = rule as Record<string, unknown>;
  if (typeof schema_id !== 'number' || !Number.isSafeInteger(schema_id) || schema_id < 1)
    throw new AccessRuleError('schema_id is a positive integer.', at('schema_id'));
  if (typeof table !== 'string' || !TABLE.test(table))
    throw new AccessRuleError('table is an identifier, optionally qualified once as schema.table.', at('table'));
  if (typeof column !== 'string' || !IDENTIFIER.test(column))
    throw new AccessRuleError('column is an identifier (^[A-Za-z_][A-Za-z0-9_]{0,62}$).', at('column'));
  if (typeof op !== 'string' || !OPERATORS.has(op))
    throw new AccessRuleError(`op is one of ${ACCESS_RULE_OPERATORS.join(', ')}.`, at('op'));
  const present = 'value' in rule && value !== undefined;
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && 'property' in value)
    throw new AccessRuleError(
      'The value is a property reference: give the resolved rules of a verified embed token (ugs.access_rules).',
      at('value'),
    );
  if (NULL_TEST_OPERATORS.has(op)) {
    if (present) throw new AccessRuleError(`${op} takes no value.`, at('value'));
  } else if (LIST_OPERATORS.has(op)) {
    if (!Array.isArray(value) || value.length > MAX_ACCESS_RULE_VALUES || !value.every(isScalar))
      throw new AccessRuleError(
        `${op} takes a list of 0 to ${MAX_ACCESS_RULE_VALUES} strings, finite numbers or booleans.`,
        at('value'),
      );
  } else if (!isScalar(value)) {
    throw new AccessRuleError(`${op} takes a string, a finite number or a boolean, not ${kindOf(value)}.`, at('value'));
  }
  return rule as ResolvedAccessRule;
}

function checkedOptions(options: AccessRulesToSqlOptions) {
  const { dialect, table, schemaId, unlisted, alias, firstParameter } = options;
  if (dialect !== 'postgres' && dialect !== 'mysql' && dialect !== 'sqlite')
    throw new AccessRuleError('dialect is postgres, mysql or sqlite.', 'options.dialect');
  if (typeof table !== 'string' || !TABLE.test(table))
    throw new AccessRuleError('table is an identifier, optionally qualified once as schema.table.', 'options.table');
  if (typeof schemaId !== 'number' || !Number.isSafeInteger(schemaId) || schemaId < 1)
    throw new AccessRuleError('schemaId is a positive integer.', 'options.schemaId');
  if (unlisted !== undefined && unlisted !== 'deny' && unlisted !== 'allow')
    throw new AccessRuleError("unlisted is 'deny' or 'allow'.", 'options.unlisted');
  if (alias !== undefined && (typeof alias !== 'string' || !IDENTIFIER.test(alias)))
    throw new AccessRuleError('alias is an identifier (^[A-Za-z_][A-Za-z0-9_]{0,62}$).', 'options.alias');
  if (firstParameter !== undefined && (!Number.isSafeInteger(firstParameter) || firstParameter < 1))
    throw new AccessRuleError('firstParameter is a positive integer.', 'options.firstParameter');
  return { dialect, table, schemaId, allowUnlisted: unlisted === 'allow', alias, firstParameter: firstParameter ?? 1 };
}

/*
 * MySQL/MariaDB and SQLite compare a value with a column by rules of their own: MySQL's default
 * collations ignore case, accents and trailing spaces, and it compares a string column with a number
 * as numbers ('acme' = 0 holds); SQLite follows a column's declared collation (NOCASE). PostgreSQL is
 * the reference: the value read as the column's type, strings compared exactly. So, on these two:
 * - a number, or a string that is a plain decimal number, compares as the database converts it to the
 *   column's type: as a number with a numeric column, as its text, byte for byte, with a text column
 *   (MySQL: bound as text and `CAST(? AS BINARY)`, so that a text column is never read as a number);
 * - any other string compares byte for byte (MySQL `CAST(? AS BINARY)`, SQLite `COLLATE BINARY`), and
 *   never with a number: a guard excludes numeric columns, where PostgreSQL refuses the query;
 * - a boolean is 1 or 0 with a numeric column (how both store booleans), 'true' or 'false' with text.
 */
const NUMERIC_TEXT = /^[+-]?\d+(\.\d+)?$/;
// A numeric column's value as MySQL writes it (a DOUBLE's with an exponent); a date's never is one.
const NUMERIC_VALUE_SQL = "'^[-+]?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]+)?$'";

type Kind = 'number' | 'boolean' | 'text';
const KINDS: readonly Kind[] = ['number', 'boolean', 'text'];
const kindOfScalar = (value: Scalar): Kind =>
  typeof value === 'boolean' ? 'boolean' : typeof value === 'number' || NUMERIC_TEXT.test(value) ? 'number' : 'text';

function typedCondition(
  dialect: 'mysql' | 'sqlite',
  target: string,
  op: Operator,
  value: Scalar | Scalar[],
  push: (value: SqlParameter) => void,
): string {
  const mysql = dialect === 'mysql';
  const operand = (item: Scalar): string => {
    if (typeof item === 'boolean') {
      push(mysql ? (item ? '1' : '0') : Number(item));
      push(String(item));
      return mysql
        ? `CAST(IF(CHARSET(${target}) = 'binary', ?, ?) AS BINARY)`
        : `(CASE WHEN typeof(${target}) <> 'text' THEN ? ELSE ? END)`;
    }
    push(mysql ? String(item) : item);
    if (mysql) return 'CAST(? AS BINARY)';
    // Drivers bind a JavaScript number as a REAL, which a text column reads as '0.0': an integer is cast
    // back, and `+` leaves the column's affinity to apply (an integer on a text column reads as '0').
    return typeof item === 'number' && Number.isSafeInteger(item) ? '+CAST(? AS INTEGER)' : '?';
  };
  // SQLite converts a number to a text column's type only when neither side carries COLLATE.
  const column = (kind: Kind) => (mysql || kind === 'number' ? target : `${target} COLLATE BINARY`);
  // True where the column holds no number (text, a date, a blob); NULL where it is NULL.
  const notNumeric = mysql
    ? `(CHARSET(${target}) <> 'binary' OR CONVERT(${target} USING utf8mb4) NOT REGEXP ${NUMERIC_VALUE_SQL})`
    : `typeof(${target}) NOT IN ('integer', 'real')`;
  const guarded = (kind: Kind, condition: string) => (kind === 'text' ? `${condition} AND ${notNumeric}` : condition);

  if (op !== 'in' && op !== 'not_in') {
    const kind = kindOfScalar(value as Scalar);
    return guarded(kind, `${column(kind)} ${COMPARISONS[op]} ${operand(value as Scalar)}`);
  }
  const list = value as Scalar[];
  if (list.length === 0) return op === 'in' ? 'FALSE' : 'TRUE';
  const keyword = op === 'in' ? 'IN' : 'NOT IN';
  const parts = KINDS.map((kind) => [kind, list.filter((item) => kindOfScalar(item) === kind)] as const)
    .filter(([, items]) => items.length > 0)
    .map(([kind, items]) => guarded(kind, `${column(kind)} ${keyword} (${items.map(operand).join(', ')})`));
  // `in`: equal to one of the values; `not_in`: different from each (so no number either, if a text is listed).
  if (op === 'not_in' || parts.length === 1) return parts.join(' AND ');
  return `(${parts.map((part) => (part.includes(' AND ') ? `(${part})` : part)).join(' OR ')})`;
}

/**
 * Turns the resolved access rules of a verified embed token (`claims.ugs.access_rules`) into a filter
 * for a query of one table: `{ text, values }`, where `text` is a condition to AND into the query's
 * WHERE clause and `values` its parameters, in order.
 *
 * - The rules of `schemaId` whose `table` equals `options.table` exactly apply, all of them (AND). A
 *   table no such rule names gives `FALSE` (fail closed), or `TRUE` with `unlisted: 'allow'`.
 * - Every value is a parameter: `$1`, `$2`… on PostgreSQL (an `in`/`not_in` list is one array
 *   parameter: `= ANY($n)`, `<> ALL($n)`), `?` on MySQL and SQLite (a list expands to `IN (?, ?, …)`).
 * - Every dialect matches what PostgreSQL matches: strings exactly (case, accents and trailing spaces
 *   count, whatever the column's collation), a number against text as its text, a string against a
 *   number only when it is a plain decimal number; on MySQL and SQLite a boolean is 1 or 0 against a
 *   numeric column, 'true'/'false' against text (see typedCondition). `lt`/`gt` on strings follow the
 *   column's collation on PostgreSQL, code point (byte) order on MySQL and SQLite.
 * - Identifiers are checked again (`^[A-Za-z_][A-Za-z0-9_]{0,62}$`, a table qualified once at most)
 *   and quoted for the dialect: `"…"` on PostgreSQL and SQLite, backticks on MySQL. Columns are
 *   qualified with the table (`"sales"."orders"."region"`) or with `alias`.
 * - An empty `in` list is `FALSE`, an empty `not_in` list `TRUE`. As in SQL, a NULL in the column
 *   never satisfies a comparison: `neq`, `not_in`, `lt`… exclude the rows where it is NULL.
 *
 * Throws AccessRuleError when a rule or an option is not as docs/api.md#access-rules shapes it (an unresolved
 * property reference included): a filter that cannot be written safely is no filter.
 */
export function accessRulesToSql(rules: readonly ResolvedAccessRule[], options: AccessRulesToSqlOptions): SqlFilter {
  if (!Array.isArray(rules))
    throw new AccessRuleError(`The rules are an array (a token's ugs.access_rules), not ${kindOf(rules)}.`, 'rules');
  const { dialect, table, schemaId, allowUnlisted, alias, firstParameter } = checkedOptions(options);
  // Every rule is checked, those of other tables too: a token carrying one malformed rule is not trusted for any table.
  const applying = rules
    .map((rule, index) => checkedRule(rule, index))
    .filter((rule) => rule.schema_id === schemaId && rule.table === table);
  if (applying.length === 0) return { text: allowUnlisted ? 'TRUE' : 'FALSE', values: [] };

  const quote = dialect === 'mysql' ? (name: string) => `\`${name}\`` : (name: string) => `"${name}"`;
  const qualifier = alias === undefined ? table.split('.').map(quote).join('.') : quote(alias);
  const values: SqlParameter[] = [];
  const push = (value: SqlParameter) => values.push(value);

  const conditions = applying.map(({ column, op, value }) => {
    const target = `${qualifier}.${quote(column)}`;
    if (op === 'is_null') return `${target} IS NULL`;
    if (op === 'not_null') return `${target} IS NOT NULL`;
    if (dialect === 'postgres') {
      const bind = (bound: Scalar | Scalar[]) => (push(bound), `$${firstParameter + values.length - 1}`);
      if (op === 'in' || op === 'not_in') {
        const list = value as Scalar[];
        if (list.length === 0) return op === 'in' ? 'FALSE' : 'TRUE';
        return op === 'in' ? `${target} = ANY(${bind(list)})` : `${target} <> ALL(${bind(list)})`;
      }
      return `${target} ${COMPARISONS[op]} ${bind(value as Scalar)}`;
    }
    return typedCondition(dialect, target, op, value as Scalar | Scalar[], push);
  });
  return { text: `(${conditions.join(' AND ')})`, values };
}
