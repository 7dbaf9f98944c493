import type { ACCESS_RULE_OPERATORS } from '../../wire/contract.constants.js';

/*
 * An access rule as the domain holds it (docs/api.md#access-rules), in its wire shape (snake_case keys): it is stored,
 * shown, audited and signed as it is (docs/adr/0027-access-rules.md). src/wire/access-rules.schemas.ts
 * states the same shape for validation and /openapi.json.
 */

export type AccessRuleOperator = (typeof ACCESS_RULE_OPERATORS)[number];

type Scalar = string | number | boolean;

export interface AccessRule {
  schema_id: number;
  table: string;
  column: string;
  op: AccessRuleOperator;
  /** Absent for the null tests; a list for in/not_in; else a scalar; or a reference to a computed property. */
  value?: Scalar | Scalar[] | { property: string };
}

/** A rule as an embed token carries it: every property reference resolved. */
export type ResolvedAccessRule = Omit<AccessRule, 'value'> & { value?: Scalar | Scalar[] };

/** A rule among a group's effective rules, with the team id of the group that owns it. */
export type ComputedAccessRule = AccessRule & { team_id: number };

/** The operators that take a list, and those that take no value at all. */
export const LIST_OPERATORS: readonly AccessRuleOperator[] = ['in', 'not_in'];
export const NULL_TEST_OPERATORS: readonly AccessRuleOperator[] = ['is_null', 'not_null'];
