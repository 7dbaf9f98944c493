import { failure } from '../errors.js';
import { isStorableText, UNSTORABLE_TEXT } from '../storable-text.rules.js';
import {
  LIST_OPERATORS,
  NULL_TEST_OPERATORS,
  type AccessRule,
  type AccessRuleOperator,
  type ComputedAccessRule,
  type ResolvedAccessRule,
} from './access-rule.records.js';
import {
  ACCESS_RULE_FIELDS,
  ACCESS_RULE_IDENTIFIER,
  ACCESS_RULE_OPERATORS,
  ACCESS_RULE_TABLE,
  MAX_ACCESS_RULE_VALUES as MAX_ACCESS_RULE_LIST,
  MAX_ACCESS_RULES,
  MAX_CATALOGUE_ID,
} from '../../wire/contract.constants.js';

/*
 * Access rules (docs/api.md#access-rules), for both engines and every way in (API, admin API, import): the checks a
 * group's own rules must pass, the effective rules a group has with its ancestors', and their
 * resolution for an embed token. The bound on a group's effective rules is checked beside the bound on
 * its merged properties, in hierarchy.ts. A rule is held in its wire shape (snake_case keys): it is
 * stored, shown and signed as it is.
 */

export type { AccessRule, AccessRuleOperator, ComputedAccessRule, ResolvedAccessRule };

type Scalar = string | number | boolean;

/** What a group with its ancestors holds of rules: its own, and each ancestor's with its team id. */
export interface RuleLevels {
  teamId: number;
  accessRules: AccessRule[];
  ancestors: { teamId: number; accessRules: AccessRule[] }[];
}

const IDENTIFIER = new RegExp(ACCESS_RULE_IDENTIFIER);
const TABLE = new RegExp(ACCESS_RULE_TABLE);
const OPERATORS = new Set<string>(ACCESS_RULE_OPERATORS);
const RULE_KEYS: ReadonlySet<string> = new Set(ACCESS_RULE_FIELDS);

const invalid = failure.accessRuleField;
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A request's `access_rules` as the group will hold them: null and [] are none. Every defect is an
 * error naming the exact field (`access_rules[3].column`); the schemas' existence is checked by the
 * caller (`schemaIdsOf`), against the workspace's catalogue.
 */
export function checkedAccessRules(input: unknown, field = 'access_rules'): AccessRule[] {
  if (input === null || input === undefined) return [];
  if (!Array.isArray(input)) throw invalid(field, 'must be an array of rules or null');
  if (input.length > MAX_ACCESS_RULES) throw invalid(field, `must hold at most ${MAX_ACCESS_RULES} rules`);
  return input.map((rule, index) => checkedRule(rule, `${field}[${index}]`));
}

function checkedRule(input: unknown, at: string): AccessRule {
  if (!isObject(input)) throw invalid(at, 'must be an object {"schema_id", "table", "column", "op", "value"}');
  for (const key of Object.keys(input))
    if (!RULE_KEYS.has(key)) throw failure.notAnAccessRuleField(`${at}.${key.slice(0, 64)}`);
  for (const key of ['schema_id', 'table', 'column', 'op'])
    if (input[key] === undefined) throw failure.accessRuleFieldMissing(`${at}.${key}`);
  const { schema_id: schemaId, table, column, op, value } = input;
  if (typeof schemaId !== 'number' || !Number.isInteger(schemaId) || schemaId < 1 || schemaId > MAX_CATALOGUE_ID)
    throw invalid(`${at}.schema_id`, `must be a schema id: a whole number from 1 to ${MAX_CATALOGUE_ID}`);
  if (typeof table !== 'string' || !TABLE.test(table))
    throw invalid(
      `${at}.table`,
      'must be an identifier (a letter or _, then up to 62 letters, digits or _), optionally qualified once as schema.table',
    );
  if (typeof column !== 'string' || !IDENTIFIER.test(column))
    throw invalid(`${at}.column`, 'must be an identifier (a letter or _, then up to 62 letters, digits or _)');
  if (typeof op !== 'string' || !OPERATORS.has(op))
    throw invalid(`${at}.op`, `must be one of ${ACCESS_RULE_OPERATORS.join(', ')}`);
  const operator = op as AccessRuleOperator;
  const rule: AccessRule = { schema_id: schemaId, table, column, op: operator };
  if (NULL_TEST_OPERATORS.includes(operator)) {
    if (value !== undefined) throw invalid(`${at}.value`, `must be absent: ${operator} takes no value`);
    return rule;
  }
  if (value === undefined) throw failure.accessRuleFieldMissing(`${at}.value`, `${operator} takes a value`);
  rule.value = checkedValue(value, operator, `${at}.value`);
  return rule;
}

function checkedValue(value: unknown, op: AccessRuleOperator, at: string): NonNullable<AccessRule['value']> {
  if (isObject(value)) {
    const keys = Object.keys(value);
    const key = value.property;
    if (keys.length !== 1 || typeof key !== 'string' || key.length < 1 || key.length > 256 || !isStorableText(key))
      throw invalid(
        at,
        'as an object must be {"property": "<key>"}: the key (1 to 256 characters) of a computed property',
      );
    return { property: key };
  }
  const defect = valueDefect(value, op);
  if (defect) throw invalid(at, defect);
  return value as Scalar | Scalar[];
}

/** Why a value does not fit the operator (a literal or a resolved property alike), or undefined when it does. */
export function valueDefect(value: unknown, op: AccessRuleOperator): string | undefined {
  if (LIST_OPERATORS.includes(op)) {
    if (!Array.isArray(value)) return `must be an array (of at most ${MAX_ACCESS_RULE_LIST} values) for ${op}`;
    if (value.length > MAX_ACCESS_RULE_LIST) return `must hold at most ${MAX_ACCESS_RULE_LIST} values`;
    for (const [index, item] of value.entries()) {
      const itemDefect = scalarDefect(item);
      if (itemDefect) return `[${index}] ${itemDefect}`;
    }
    return undefined;
  }
  if (Array.isArray(value)) return `must be a single value for ${op} (lists are for in and not_in)`;
  return scalarDefect(value);
}

function scalarDefect(value: unknown): string | undefined {
  if (value === null) return 'must not be null: use the operators is_null and not_null';
  if (typeof value === 'boolean') return undefined;
  if (typeof value === 'string') return isStorableText(value) ? undefined : `must not hold ${UNSTORABLE_TEXT}`;
  if (typeof value === 'number')
    return Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value))
      ? undefined
      : `must be a number JSON carries exactly: finite, and an integer within ±${Number.MAX_SAFE_INTEGER}`;
  return 'must be a string, a number or a boolean';
}

/** The distinct schema ids the rules name, each with the field of its first rule, for the catalogue check. */
export function schemaIdsOf(rules: AccessRule[], field = 'access_rules'): Map<number, string> {
  const ids = new Map<number, string>();
  rules.forEach((rule, index) => {
    if (!ids.has(rule.schema_id)) ids.set(rule.schema_id, `${field}[${index}].schema_id`);
  });
  return ids;
}

/** Refuses the first rule whose schema is not among the workspace's. */
export function assertSchemasExist(rules: AccessRule[], known: ReadonlySet<number>, field = 'access_rules'): void {
  for (const [schemaId, at] of schemaIdsOf(rules, field))
    if (!known.has(schemaId)) throw failure.unknownRuleSchema(schemaId, at);
}

/**
 * A group's effective rules (docs/api.md#access-rules): the root's first, then each level down to the group's own,
 * each with the team id of the group that owns it. All must hold, so the order only reads well.
 */
export function computedAccessRules(group: RuleLevels): ComputedAccessRule[] {
  // Most groups have no rules and no ancestors: nothing to build on the hot path.
  if (group.ancestors.length === 0 && group.accessRules.length === 0) return [];
  const levels = [...group.ancestors].reverse().concat({ teamId: group.teamId, accessRules: group.accessRules });
  return levels.flatMap(({ teamId, accessRules }) => accessRules.map((rule) => ({ ...rule, team_id: teamId })));
}
