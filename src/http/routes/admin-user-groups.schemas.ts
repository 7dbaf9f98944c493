import { Type } from 'typebox';
import { EnvironmentQuery } from '../common.schemas.js';
import { PageQuery } from '../cursor.js';

export const ListUserGroupsQuery = Type.Object(
  {
    ...EnvironmentQuery.properties,
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'A provided_id prefix or a name substring (case-insensitive).' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);
