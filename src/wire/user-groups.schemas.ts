import { Type, type Static } from 'typebox';
import { MAX_PROPERTIES_BYTES, MAX_PROPERTIES_DEPTH } from './contract.constants.js';
import {
  EnvironmentTag,
  IssuedId,
  MAX_SAFE,
  NO_CONTROL_CHARACTERS,
  Tag,
  Text256,
  Timestamp,
} from './common.schemas.js';
import { Success } from './envelope.js';
import { AccessRule, AccessRulesInput, ComputedAccessRule } from './access-rules.schemas.js';

export const UserGroupIdentifier = (description: string) =>
  Type.Union(
    [
      Type.String({ minLength: 1, maxLength: 256, pattern: NO_CONTROL_CHARACTERS }),
      Type.Integer({ minimum: -MAX_SAFE, maximum: MAX_SAFE }),
    ],
    { description },
  );

export const MAPPING_RULE =
  'An object of at most 64 entries from schema id (a decimal integer) to a data source id (an integer or digit string) or a data source provided_id (a string).';

export const Mapping = Type.Record(
  Type.String({ pattern: '^(0|[1-9][0-9]{0,15})$' }),
  Type.Union([
    Type.Integer({ minimum: 1, maximum: MAX_SAFE }),
    Type.String({ minLength: 1, maxLength: 256, pattern: NO_CONTROL_CHARACTERS }),
  ]),
  {
    maxProperties: 64,
    additionalProperties: false,
    description: MAPPING_RULE,
  },
);

export const PropertiesObject = Type.Object({}, { additionalProperties: true });
export const Properties = Type.Union([PropertiesObject, Type.Null()], {
  description: `A JSON object (not an array or a scalar) of at most ${MAX_PROPERTIES_BYTES} bytes serialized and ${MAX_PROPERTIES_DEPTH} levels deep, or null.`,
});

const CurrentToken = Type.String({
  maxLength: 256,
  pattern: NO_CONTROL_CHARACTERS,
  description: 'The user group token, at most 256 characters without control characters.',
});

export const ParentUserGroupId = Type.Union(
  [UserGroupIdentifier('The user_group_id of the parent group in the same environment.'), Type.Null()],
  {
    description:
      'The user_group_id of the parent group in the same environment (at most 4 levels: a root and three below it); null for none (on PUT: detach).',
  },
);

export const MAX_TAGS = 32;
export const Tags = Type.Array(Tag(), {
  maxItems: MAX_TAGS,
  uniqueItems: true,
  description: `At most ${MAX_TAGS} distinct strings of 1 to 64 characters without control characters, returned sorted; a PUT replaces them whole.`,
});

export const IsDemoGroup = Type.Boolean({
  description: 'A demo group, whose dashboards show a watermark; false by default.',
});

/** The tree, demo and tag fields (docs/api.md#hierarchy-demo-groups-and-tags) that get-or-create and PUT both take. */
const TreeFields = {
  parent_user_group_id: Type.Optional(ParentUserGroupId),
  is_demo_group: Type.Optional(IsDemoGroup),
  tags: Type.Optional(Tags),
  access_rules: Type.Optional(AccessRulesInput),
};

export const ID_RULE =
  'A string of 1 to 256 characters without control characters, or an integer (which becomes its decimal string).';
export const NAME_RULE = 'A string of 1 to 256 characters without control characters.';

export const GetOrCreateUserGroupBody = Type.Object(
  {
    user_group_id: UserGroupIdentifier(ID_RULE),
    name: Type.Optional(Text256(NAME_RULE)),
    mapping: Type.Optional(Mapping),
    properties: Type.Optional(Properties),
    ...TreeFields,
  },
  { additionalProperties: false },
);
export type GetOrCreateUserGroupBody = Static<typeof GetOrCreateUserGroupBody>;

export const UpdateUserGroupBody = Type.Object(
  {
    user_group_id: UserGroupIdentifier(ID_RULE),
    new_user_group_id: Type.Optional(UserGroupIdentifier(ID_RULE)),
    name: Type.Optional(Text256(NAME_RULE)),
    mapping: Type.Optional(
      Type.Union([Mapping, Type.Null()], { description: `${MAPPING_RULE} null (or {}) clears the mapping.` }),
    ),
    properties: Type.Optional(Properties),
    ...TreeFields,
  },
  { additionalProperties: false },
);
export type UpdateUserGroupBody = Static<typeof UpdateUserGroupBody>;

export const RotateUserGroupTokenBody = Type.Object({ current_token: CurrentToken }, { additionalProperties: false });
export type RotateUserGroupTokenBody = Static<typeof RotateUserGroupTokenBody>;

export const DeleteUserGroupBody = Type.Object(
  {
    current_token: Type.Optional(CurrentToken),
    user_group_id: Type.Optional(UserGroupIdentifier(ID_RULE)),
    data_source_provided_id: Type.Optional(Text256('The provided_id of a data source the group must map to.')),
  },
  {
    additionalProperties: false,
    description: 'Give current_token, user_group_id, or both (then they must name the same group).',
  },
);
export type DeleteUserGroupBody = Static<typeof DeleteUserGroupBody>;

export const VerifyUserGroupTokenBody = Type.Object(
  {
    token: Type.String({
      maxLength: 8192,
      pattern: NO_CONTROL_CHARACTERS,
      description:
        'A user group token (ugt_…) or an embed token (a JWS from POST /api/user/embed_token), at most 8 KiB.',
    }),
  },
  { additionalProperties: false },
);
export type VerifyUserGroupTokenBody = Static<typeof VerifyUserGroupTokenBody>;

export const UserGroup = Type.Object({
  team_id: Type.Integer({ ...IssuedId, description: 'Internal id; unique in the deployment, never reused.' }),
  token: Type.String({ description: 'The user group token: ugt_ followed by 64 lowercase hex characters.' }),
  name: Type.String(),
  provided_id: Type.String({ description: "The caller's own id (user_group_id)." }),
  properties: Type.Union([PropertiesObject, Type.Null()]),
  mapping: Type.Record(Type.String(), Type.String(), { description: 'Schema id → data source id, both as strings.' }),
  parent_user_group_id: Type.Union([Type.String(), Type.Null()], {
    description: 'The provided_id of the parent group, or null for a root.',
  }),
  computed_properties: Type.Object(
    {},
    {
      additionalProperties: true,
      description:
        'The properties of the root, then each level down to this group, merged key by key (top-level keys), the nearer level winning; read as the ancestors are now.',
    },
  ),
  computed_mapping: Type.Record(Type.String(), Type.String(), {
    description: 'The mappings of the root down to this group merged schema by schema, the nearer level winning.',
  }),
  is_demo_group: Type.Boolean(),
  tags: Type.Array(Type.String(), { description: 'In code point order.' }),
  access_rules: Type.Array(AccessRule, {
    description: "The group's own access rules, in the order given; [] when none.",
  }),
  computed_access_rules: Type.Array(ComputedAccessRule, {
    description:
      'The rules of the root, then each level down to this group, each with the team_id of the group that owns it; all must hold. Read as the ancestors are now.',
  }),
  api_environment_tag: EnvironmentTag,
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type UserGroup = Static<typeof UserGroup>;

/**
 * One JSON Lines record of `ugs groups export` / `import`: the group as the API shows it, with the
 * mapping's data sources named by provided id, and the token only in exports made with tokens. The
 * hosted product's user group objects, as its API returns them, are lines too (docs/api.md#migrating-from-the-hosted-product).
 */
export const TransferredUserGroupLine = Type.Object(
  {
    team_id: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_SAFE,
        description:
          'Kept on import when this deployment never issued it, whatever the order of the lines, and it is at most 2147483647 (later ones are issued above the kept ones); otherwise the group gets a new one.',
      }),
    ),
    provided_id: UserGroupIdentifier(ID_RULE),
    name: Type.Optional(Text256(NAME_RULE)),
    properties: Type.Optional(Properties),
    mapping: Type.Optional(Type.Union([Mapping, Type.Null()], { description: `${MAPPING_RULE} null: none.` })),
    ...TreeFields,
    api_environment_tag: Type.Optional(
      Type.Union([Type.Literal('Customer'), Type.Literal('Testing'), Type.Null()], {
        description: "Customer or Testing; null or absent: the importing caller's environment.",
      }),
    ),
    token: Type.Optional(
      Type.String({
        maxLength: 256,
        pattern: NO_CONTROL_CHARACTERS,
        description:
          'A native token (ugt_ and 64 lowercase hex characters) or one of the hosted product: 32 to 256 visible ASCII characters without ".", such as a UUID.',
      }),
    ),
    created_at: Type.Optional(Type.String()),
    updated_at: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const UserGroupResponse = Type.Object({ success: Success, user_group: UserGroup });

/** A group as the admin API shows it: without `token` when read from the other environment (docs/api.md#the-admin-api). */
export const AdminUserGroup = Type.Object({
  ...UserGroup.properties,
  token: Type.Optional(
    Type.String({
      description:
        "The user group token; absent when the group is read with an admin token of the workspace's other environment.",
    }),
  ),
});
export type AdminUserGroup = Static<typeof AdminUserGroup>;
export const AdminUserGroupResponse = Type.Object({ success: Success, user_group: AdminUserGroup });
export const GetOrCreateUserGroupResponse = Type.Object({
  success: Success,
  new_user_group: Type.Boolean(),
  user_group: UserGroup,
});
export const DeleteUserGroupResponse = Type.Object({ success: Success });
