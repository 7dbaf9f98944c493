import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { DataSourceService } from '../../domain/data-sources.service.js';
import type { DataSourceRecord } from '../../domain/models.js';
import { EnvironmentTag, Id, Text256 } from '../common.schemas.js';
import { responses, Success } from '../envelope.js';

export const CreateDataSourceBody = Type.Object(
  {
    provided_id: Text256('Your own id for the data source; unique per workspace and environment.'),
    name: Text256('Display name.'),
    schema_id: Id('The schema this data source serves.'),
    environment: Type.Optional(EnvironmentTag),
  },
  { additionalProperties: false },
);
export type CreateDataSourceBody = Static<typeof CreateDataSourceBody>;

export const DataSource = Type.Object({
  id: Type.Integer(),
  provided_id: Type.String(),
  name: Type.String(),
  schema_id: Type.Integer(),
  api_environment_tag: EnvironmentTag,
});
export type DataSource = Static<typeof DataSource>;

const EnvironmentQuery = Type.Object({ environment: Type.Optional(EnvironmentTag) }, { additionalProperties: false });

const toDataSource = (record: DataSourceRecord): DataSource => ({
  id: record.id,
  provided_id: record.providedId,
  name: record.name,
  schema_id: record.schemaId,
  api_environment_tag: record.environment,
});

const tags = ['admin'];
const security = [{ apiToken: [] }];

export const dataSourceRoutes: FastifyPluginAsyncTypebox<{ dataSources: DataSourceService }> = async (app, { dataSources }) => {
  app.post(
    '/admin/data_sources',
    {
      schema: {
        summary: 'Create a data source',
        description: 'environment defaults to the API token\'s.',
        tags,
        security,
        body: CreateDataSourceBody,
        response: responses(Type.Object({ success: Success, data_source: DataSource })),
      },
    },
    async (request) => {
      const { body } = request;
      const record = await dataSources.createDataSource(request.caller, {
        providedId: body.provided_id,
        name: body.name,
        schemaId: body.schema_id,
        ...(body.environment ? { environment: body.environment } : {}),
      });
      return { success: 1 as const, data_source: toDataSource(record) };
    },
  );

  app.get(
    '/admin/data_sources',
    {
      schema: {
        summary: 'List data sources',
        description: 'The data sources of the given environment, by default the API token\'s.',
        tags,
        security,
        querystring: EnvironmentQuery,
        response: responses(Type.Object({ success: Success, data_sources: Type.Array(DataSource) })),
      },
    },
    async (request) => ({
      success: 1 as const,
      data_sources: (await dataSources.listDataSources(request.caller, request.query.environment)).map(toDataSource),
    }),
  );
};
