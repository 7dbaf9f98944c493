import type { AccessRule, ComputedAccessRule, ResolvedAccessRule } from '../../wire/access-rules.schemas.js';
import {
  ACCESS_RULE_LIST_OPERATORS,
  ACCESS_RULE_NULL_TEST_OPERATORS,
  type ACCESS_RULE_OPERATORS,
} from '../../wire/contract.constants.js';

/*
 * An access rule as the domain holds it (docs/api.md#access-rules), in its wire shape (snake_case keys): it is stored,
 * shown, audited and signed as it is (docs/adr/0027-access-rules.md). Its shape is defined once, by the
 * schemas in src/wire/access-rules.schemas.ts, which validation, /openapi.json and @ugs/client read
 * too; the domain takes their types only (a type import, erased: eslint.config.js allows nothing more).
 */
export type { AccessRule, ComputedAccessRule, ResolvedAccessRule };

export type AccessRuleOperator = (typeof ACCESS_RULE_OPERATORS)[number];

/** The operators that take a list, and those that take no value at all. */
export const LIST_OPERATORS: readonly AccessRuleOperator[] = ACCESS_RULE_LIST_OPERATORS;
export const NULL_TEST_OPERATORS: readonly AccessRuleOperator[] = ACCESS_RULE_NULL_TEST_OPERATORS;
