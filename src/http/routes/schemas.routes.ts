import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { SchemaRecord } from '../../domain/models.js';
import type { SchemaService } from '../../domain/schemas.service.js';
import { Text256 } from '../common.schemas.js';
import { responses, Success } from '../envelope.js';

export const CreateSchemaBody = Type.Object({ name: Text256('Unique within the workspace.') }, { additionalProperties: false });
export type CreateSchemaBody = Static<typeof CreateSchemaBody>;

export const Schema = Type.Object({ id: Type.Integer(), name: Type.String() });
export type Schema = Static<typeof Schema>;

const toSchema = (record: SchemaRecord): Schema => ({ id: record.id, name: record.name });

const tags = ['admin'];
const security = [{ apiToken: [] }];

export const schemaRoutes: FastifyPluginAsyncTypebox<{ schemas: SchemaService }> = async (app, { schemas }) => {
  app.post(
    '/admin/schemas',
    { schema: { summary: 'Create a schema', tags, security, body: CreateSchemaBody, response: responses(Type.Object({ success: Success, schema: Schema })) } },
    async (request) => ({ success: 1 as const, schema: toSchema(await schemas.createSchema(request.caller, request.body)) }),
  );

  app.get(
    '/admin/schemas',
    { schema: { summary: 'List the workspace\'s schemas', tags, security, response: responses(Type.Object({ success: Success, schemas: Type.Array(Schema) })) } },
    async (request) => ({ success: 1 as const, schemas: (await schemas.listSchemas(request.caller)).map(toSchema) }),
  );
};
