import { Type, type Static } from 'typebox';

/*
 * Access rules (SPEC §17): row-level security that a group owns, its descendants inherit and embed
 * tokens carry. The shape of one rule, and the numbers of the contract about them. A leaf that imports
 * only TypeBox, so that @ugs/client can build it in (its renderer helper, accessRulesToSql, takes the
 * rules a token carries).
 */

/** The most rules a group may own. */
export const MAX_ACCESS_RULES = 64;
/** The most rules a group may have with its ancestors' (`computed_access_rules`). */
export const MAX_COMPUTED_ACCESS_RULES = 128;
/** The most values an `in` or `not_in` list may hold. */
export const MAX_ACCESS_RULE_LIST = 1000;

/** An SQL identifier every dialect takes unquoted as well as quoted: a letter or _, then up to 62 more. */
export const ACCESS_RULE_IDENTIFIER = '^[A-Za-z_][A-Za-z0-9_]{0,62}$';
/** A table: an identifier, optionally qualified once by its schema (`schema.table`). */
export const ACCESS_RULE_TABLE = '^[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?$';

export const ACCESS_RULE_OPERATORS = [
  'eq',
  'neq',
  'in',
  'not_in',
  'lt',
  'lte',
  'gt',
  'gte',
  'is_null',
  'not_null',
] as const;
export type AccessRuleOperator = (typeof ACCESS_RULE_OPERATORS)[number];

/** The operators that take a list, and those that take no value at all. */
export const LIST_OPERATORS: readonly AccessRuleOperator[] = ['in', 'not_in'];
export const NULL_TEST_OPERATORS: readonly AccessRuleOperator[] = ['is_null', 'not_null'];

const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);

export const AccessRuleValue = Type.Union(
  [
    Scalar,
    Type.Array(Scalar, { maxItems: MAX_ACCESS_RULE_LIST }),
    Type.Object(
      { property: Type.String({ minLength: 1, maxLength: 256 }) },
      {
        additionalProperties: false,
        description: "A reference to one of the group's computed properties, resolved when an embed token is minted.",
      },
    ),
  ],
  {
    description: `A string, number or boolean (never null: use is_null/not_null); an array of at most ${MAX_ACCESS_RULE_LIST} of those for in/not_in; absent for is_null/not_null; or {"property": key}.`,
  },
);

/** One rule as a group holds it and as an embed token carries it (there with every property reference resolved). */
export const AccessRule = Type.Object(
  {
    schema_id: Type.Integer({ minimum: 1, description: 'The schema (its public number in the workspace) the table is in.' }),
    table: Type.String({ pattern: ACCESS_RULE_TABLE, description: 'A table, optionally qualified once (schema.table).' }),
    column: Type.String({ pattern: ACCESS_RULE_IDENTIFIER }),
    op: Type.Union(
      [
        Type.Literal('eq'),
        Type.Literal('neq'),
        Type.Literal('in'),
        Type.Literal('not_in'),
        Type.Literal('lt'),
        Type.Literal('lte'),
        Type.Literal('gt'),
        Type.Literal('gte'),
        Type.Literal('is_null'),
        Type.Literal('not_null'),
      ],
      { description: 'The comparison: column <op> value (is_null and not_null take no value).' },
    ),
    value: Type.Optional(AccessRuleValue),
  },
  { additionalProperties: false },
);
export type AccessRule = Static<typeof AccessRule>;

/** A rule as `computed_access_rules` shows it: with the team_id of the group that owns it. */
export const ComputedAccessRule = Type.Object({ ...AccessRule.properties, team_id: Type.Integer() });
export type ComputedAccessRule = Static<typeof ComputedAccessRule>;

export const ACCESS_RULES_RULE = `An array of at most ${MAX_ACCESS_RULES} rules {"schema_id", "table", "column", "op", "value"} (see AccessRule); with the ancestors' at most ${MAX_COMPUTED_ACCESS_RULES}. null or [] clears them.`;

/** What a request sends: checked rule by rule by the domain, so that an error names the exact field (`access_rules[3].column`). */
export const AccessRulesInput = Type.Union([Type.Array(Type.Unknown()), Type.Null()], {
  description: ACCESS_RULES_RULE,
});
