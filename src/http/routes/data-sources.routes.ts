import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { DataSourceService } from '../../domain/data-sources/data-sources.service.js';
import type { DataSourceRecord } from '../../domain/data-sources/data-source.records.js';
import { inEnvironment, type Caller, type Environment } from '../../domain/tenancy.js';
import { EnvironmentQuery } from '../../wire/common.schemas.js';
import { NoQuery } from '../../wire/common.schemas.js';
import { Success } from '../../wire/envelope.js';
import { apiRouteSchema } from '../route-schema.js';
import { toDataSource } from '../../wire/data-source.presenter.js';
import {
  CreateDataSourceBody,
  DataSource,
  DataSourceParams,
  DataSourceResponse,
  UpdateDataSourceBody,
} from '../../wire/data-sources.schemas.js';

const inQueryEnvironment = (request: { caller: Caller; query: { environment?: Environment } }) =>
  inEnvironment(request.caller, request.query.environment);

const withDataSource = (record: DataSourceRecord) => ({ success: 1 as const, data_source: toDataSource(record) });

export const dataSourceRoutes: FastifyPluginAsyncTypebox<{ dataSources: DataSourceService }> = async (
  app,
  { dataSources },
) => {
  app.post(
    '/admin/data_sources',
    {
      schema: apiRouteSchema('admin', 'Create a data source', DataSourceResponse, {
        operationId: 'createDataSource',
        description: "environment defaults to the API token's.",
        body: CreateDataSourceBody,
        querystring: NoQuery,
      }),
    },
    async (request) => {
      const { body } = request;
      return withDataSource(
        await dataSources.createDataSource(request.caller, {
          ...(body.id !== undefined ? { id: body.id } : {}),
          providedId: body.provided_id,
          name: body.name,
          schemaId: body.schema_id,
          environment: body.environment,
          ...(body.shared !== undefined ? { shared: body.shared } : {}),
        }),
      );
    },
  );

  app.get(
    '/admin/data_sources',
    {
      schema: apiRouteSchema(
        'admin',
        'List data sources',
        Type.Object({ success: Success, data_sources: Type.Array(DataSource) }),
        {
          operationId: 'listDataSources',
          description: "The data sources of the given environment, by default the API token's.",
          querystring: EnvironmentQuery,
        },
      ),
    },
    async (request) => ({
      success: 1 as const,
      data_sources: (await dataSources.listDataSources(request.caller, request.query.environment)).map(toDataSource),
    }),
  );

  app.get(
    '/admin/data_sources/:id',
    {
      schema: apiRouteSchema('admin', 'Get a data source', DataSourceResponse, {
        operationId: 'getDataSource',
        params: DataSourceParams,
        querystring: EnvironmentQuery,
      }),
    },
    async (request) =>
      withDataSource(await dataSources.getDataSource(inQueryEnvironment(request), Number(request.params.id))),
  );

  app.patch(
    '/admin/data_sources/:id',
    {
      schema: apiRouteSchema('admin', 'Update a data source', DataSourceResponse, {
        operationId: 'updateDataSource',
        description:
          'Absent fields stay. schema_id cannot change while user groups map to it (409 data_source_in_use).',
        params: DataSourceParams,
        querystring: EnvironmentQuery,
        body: UpdateDataSourceBody,
      }),
    },
    async (request) => {
      const { body } = request;
      return withDataSource(
        await dataSources.updateDataSource(inQueryEnvironment(request), Number(request.params.id), {
          providedId: body.provided_id,
          name: body.name,
          schemaId: body.schema_id,
        }),
      );
    },
  );

  app.delete(
    '/admin/data_sources/:id',
    {
      schema: apiRouteSchema('admin', 'Delete a data source', DataSourceResponse, {
        operationId: 'deleteDataSource',
        description: 'Refused with 409 data_source_in_use, naming how many user groups map to it, while any does.',
        params: DataSourceParams,
        querystring: EnvironmentQuery,
      }),
    },
    async (request) =>
      withDataSource(await dataSources.deleteDataSource(inQueryEnvironment(request), Number(request.params.id))),
  );
};
