import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { SchemaService } from '../../domain/schemas/schemas.service.js';
import { NoQuery } from '../../wire/common.schemas.js';
import { Success } from '../../wire/envelope.js';
import { apiRouteSchema } from '../route-schema.js';
import { toSchema } from '../../wire/schema.presenter.js';
import { CreateSchemaBody, Schema } from '../../wire/schemas.schemas.js';

export const schemaRoutes: FastifyPluginAsyncTypebox<{ schemas: SchemaService }> = async (app, { schemas }) => {
  app.post(
    '/admin/schemas',
    {
      schema: apiRouteSchema('admin', 'Create a schema', Type.Object({ success: Success, schema: Schema }), {
        operationId: 'createSchema',
        body: CreateSchemaBody,
        querystring: NoQuery,
      }),
    },
    async (request) => ({
      success: 1 as const,
      schema: toSchema(await schemas.createSchema(request.caller, request.body)),
    }),
  );

  app.get(
    '/admin/schemas',
    {
      schema: apiRouteSchema(
        'admin',
        "List the workspace's schemas",
        Type.Object({ success: Success, schemas: Type.Array(Schema) }),
        { operationId: 'listSchemas', querystring: NoQuery },
      ),
    },
    async (request) => ({ success: 1 as const, schemas: (await schemas.listSchemas(request.caller)).map(toSchema) }),
  );
};
