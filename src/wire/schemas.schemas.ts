import { Type, type Static } from 'typebox';
import { Text256 } from './common.schemas.js';

export const CreateSchemaBody = Type.Object(
  { name: Text256('Unique within the workspace.') },
  { additionalProperties: false },
);
export type CreateSchemaBody = Static<typeof CreateSchemaBody>;

export const Schema = Type.Object({ id: Type.Integer(), name: Type.String() });
export type Schema = Static<typeof Schema>;
