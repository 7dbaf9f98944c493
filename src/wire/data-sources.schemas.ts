import { Type, type Static } from 'typebox';
import { CatalogueId, ChosenCatalogueId, EnvironmentTag, Id, Text256 } from './common.schemas.js';
import { IdParam } from './common.schemas.js';
import { Success } from './envelope.js';

const ProvidedId = Text256('Your own id for the data source; unique per workspace and environment.');

export const CreateDataSourceBody = Type.Object(
  {
    id: Type.Optional(ChosenCatalogueId('data source')),
    provided_id: ProvidedId,
    name: Text256('Display name.'),
    schema_id: Id('The schema this data source serves.'),
    environment: Type.Optional(EnvironmentTag),
    shared: Type.Optional(
      Type.Boolean({
        description:
          'Mappable from every environment of the workspace, not only its own (default false); set at creation only. A mapping names it by the same id or provided id in Customer and Testing.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateDataSourceBody = Static<typeof CreateDataSourceBody>;

export const UpdateDataSourceBody = Type.Object(
  {
    provided_id: Type.Optional(ProvidedId),
    name: Type.Optional(Text256('Display name.')),
    schema_id: Type.Optional(Id('The schema this data source serves; cannot change while groups map to it.')),
  },
  { additionalProperties: false },
);
export type UpdateDataSourceBody = Static<typeof UpdateDataSourceBody>;

export const DataSource = Type.Object({
  id: CatalogueId,
  provided_id: Type.String(),
  name: Type.String(),
  schema_id: CatalogueId,
  api_environment_tag: EnvironmentTag,
  shared: Type.Boolean({ description: 'Mappable from every environment of the workspace.' }),
});
export type DataSource = Static<typeof DataSource>;

export const DataSourceParams = Type.Object({ id: IdParam('Data source id.') });
export const DataSourceResponse = Type.Object({ success: Success, data_source: DataSource });
