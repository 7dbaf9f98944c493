import { Type, type Static } from 'typebox';
import { CatalogueId, ChosenCatalogueId, Text256 } from './common.schemas.js';

export const CreateSchemaBody = Type.Object(
  { name: Text256('Unique within the workspace.'), id: Type.Optional(ChosenCatalogueId('schema')) },
  { additionalProperties: false },
);
export type CreateSchemaBody = Static<typeof CreateSchemaBody>;

export const Schema = Type.Object({ id: CatalogueId, name: Type.String() });
export type Schema = Static<typeof Schema>;
