import { Type } from 'typebox';
import { EnvironmentQuery, Tag } from './common.schemas.js';
import { PageQuery } from './page.schemas.js';

export const ListUserGroupsQuery = Type.Object(
  {
    ...EnvironmentQuery.properties,
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'A provided_id prefix or a name substring (case-insensitive).',
      }),
    ),
    parent: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description: 'Only the children of the group with this provided_id.',
      }),
    ),
    tag: Type.Optional(Tag('Only groups carrying this tag.')),
    is_demo_group: Type.Optional(
      Type.Union([Type.Literal('true'), Type.Literal('false')], {
        description: 'Only demo groups (true) or only the others (false).',
      }),
    ),
    ...PageQuery,
  },
  { additionalProperties: false },
);
