import { Type, type Static } from 'typebox';
import {
  type AccessRuleField,
  ACCESS_RULE_IDENTIFIER,
  ACCESS_RULE_OPERATORS,
  ACCESS_RULE_TABLE,
  MAX_ACCESS_RULE_VALUES,
  MAX_ACCESS_RULES,
  MAX_CATALOGUE_ID,
  MAX_COMPUTED_ACCESS_RULES,
} from './contract.constants.js';
import { IssuedId } from './common.schemas.js';

/*
 * An access rule (docs/api.md#access-rules): which rows of one table of one schema a group may see. The one
 * definition of its shape: validation and /openapi.json read these schemas, the domain their types
 * (src/domain/access-rules/access-rule.records.ts), and @ugs/client builds them in. The shape only;
 * which value each operator takes, the schema's existence and the limits on a group's rules are the
 * domain's rules. The client's accessRulesToSql checks the resolved form again before it writes SQL.
 */

const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);
const ValueList = Type.Array(Scalar, {
  maxItems: MAX_ACCESS_RULE_VALUES,
  description: `For in and not_in only: 0 to ${MAX_ACCESS_RULE_VALUES} values.`,
});
const PropertyReference = Type.Object(
  { property: Type.String({ minLength: 1, description: "A key of the group's computed properties." }) },
  { additionalProperties: false },
);

const ruleFields = {
  schema_id: Type.Integer({ minimum: 1, maximum: MAX_CATALOGUE_ID, description: 'A schema of the workspace.' }),
  table: Type.String({
    pattern: ACCESS_RULE_TABLE,
    description: 'An identifier, optionally qualified once as schema.table; matched exactly (case included).',
  }),
  column: Type.String({ pattern: ACCESS_RULE_IDENTIFIER, description: 'An identifier.' }),
  op: Type.Enum(ACCESS_RULE_OPERATORS),
} satisfies Record<Exclude<AccessRuleField, 'value'>, unknown>;

export const AccessRule = Type.Object(
  {
    ...ruleFields,
    value: Type.Optional(
      Type.Union([Scalar, ValueList, PropertyReference], {
        description:
          "A string, number or boolean; a list for in/not_in; absent for is_null/not_null; or {property: key}, resolved against the group's computed properties when a token is minted.",
      }),
    ),
  },
  { additionalProperties: false },
);
export type AccessRule = Static<typeof AccessRule>;
// The fields the domain and the client name (ACCESS_RULE_FIELDS) are exactly the schema's: a compile error otherwise.
const sameFields: [keyof AccessRule] extends [AccessRuleField]
  ? [AccessRuleField] extends [keyof AccessRule]
    ? true
    : false
  : false = true;
void sameFields;

/** A rule as an embed token carries it (`ugs.access_rules`): every property reference resolved. */
export const ResolvedAccessRule = Type.Object(
  { ...ruleFields, value: Type.Optional(Type.Union([Scalar, ValueList])) },
  { additionalProperties: false },
);
export type ResolvedAccessRule = Static<typeof ResolvedAccessRule>;

/** A rule as `computed_access_rules` shows it: with the team_id of the group that owns it. */
export const ComputedAccessRule = Type.Object(
  { ...AccessRule.properties, team_id: Type.Integer({ ...IssuedId, description: 'The group that owns the rule.' }) },
  { additionalProperties: false },
);
export type ComputedAccessRule = Static<typeof ComputedAccessRule>;

export const ACCESS_RULES_RULE = `An array of at most ${MAX_ACCESS_RULES} rules {"schema_id", "table", "column", "op", "value"} (the AccessRule schema); with the ancestors' at most ${MAX_COMPUTED_ACCESS_RULES}. null or [] clears them.`;

/** What a request sends: checked rule by rule by the domain, so that an error names the exact field (`access_rules[3].column`). */
export const AccessRulesInput = Type.Union([Type.Array(Type.Unknown()), Type.Null()], {
  description: ACCESS_RULES_RULE,
});
