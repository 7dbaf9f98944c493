import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { WEBHOOK_EVENT_TYPES } from '../wire/contract.constants.js';
import { WRITE_METHODS } from './idempotency.js';
import { PUBLIC_ROUTE } from './route-schema.js';
import { JSON_QUERY_FIELDS } from './routes/user-groups.routes.js';
import { WebhookEventPayload } from '../wire/webhooks.schemas.js';
import { SyncBody } from '../wire/user-group-sync.schemas.js';
import { titleNamedSchemas } from './openapi-components.js';
import {
  hoistNamedSchemas,
  publishTypes,
  type OpenApiDocument,
  type Parameter,
  type Schema,
} from './openapi-publishing.js';

/** Registers the generator before the routes so that it sees every route schema as it is added. */
export async function registerOpenApi(
  app: FastifyInstance,
  options: { version: string; publicUrl: () => string },
): Promise<void> {
  await app.register(swagger, {
    transform: ({ schema, url }) => ({ schema: titleNamedSchemas(schema), url }),
    // Runs once, when the document is first asked for: the port is bound by then (the default public URL names it).
    transformObject: (documents) => {
      if (!('openapiObject' in documents)) return documents.swaggerObject;
      const document = documents.openapiObject as OpenApiDocument;
      documentGetQueryForm(document);
      documentIdempotencyKey(document);
      documentSyncBody(document);
      publishTypes(document);
      hoistNamedSchemas(document);
      return { ...documents.openapiObject, servers: [{ url: options.publicUrl(), description: 'This deployment.' }] };
    },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'User Group Service',
        version: options.version,
        description: 'User groups of an embedded-analytics product: their tokens, properties and data-source mappings.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      webhooks: webhookDescriptions(),
      components: {
        // The one scheme API_TOKEN_SECURITY (route-schema.ts) names. One, not one per header auth.ts
        // reads: a generator sets every scheme an operation lists, and two credential headers are 401.
        securitySchemes: {
          apiToken: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An API token: "Authorization: Bearer <API_TOKEN>", or the same as "Authorization: Token <API_TOKEN>" (the scheme word is case-insensitive). Code written against the hosted product may send it as "Explo-Authorization: Token <API_TOKEN>" (or Bearer) instead of Authorization; sending both headers is 401 unauthenticated.',
          },
        },
      },
    },
  });
}

const SIGNATURE_HEADERS = [
  ['webhook-id', 'The event id (evt_…), the same on every attempt: drop a repeated one.'],
  ['webhook-timestamp', 'Unix seconds of this attempt; refuse one more than five minutes from now.'],
  [
    'webhook-signature',
    'v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">, space-separated, two while a rotated secret overlaps (Standard Webhooks).',
  ],
] as const;

/** What an endpoint receives (docs/api.md#webhooks), one entry per event type, in OpenAPI 3.1's `webhooks`. */
function webhookDescriptions() {
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          // user_group.token_rotated → userGroupTokenRotatedWebhook
          operationId: `${type.replace(/[._]([a-z])/g, (_match, letter: string) => letter.toUpperCase())}Webhook`,
          summary: `${type}: POSTed to every enabled endpoint that wants it`,
          tags: ['webhooks'],
          // The receiver tells a genuine request by its signature headers, below: no API token is sent.
          security: [],
          parameters: SIGNATURE_HEADERS.map(([name, description]) => ({
            name,
            in: 'header' as const,
            required: true,
            description,
            schema: { type: 'string' as const },
          })),
          requestBody: {
            required: true,
            content: { 'application/json': { schema: titleNamedSchemas(WebhookEventPayload) as object } },
          },
          responses: {
            '200': {
              description:
                'Any 2xx within 10 s is success; anything else is retried with backoff for more than 24 hours.',
            },
          },
        },
      },
    ]),
  );
}

export function registerOpenApiRoute(app: FastifyInstance): void {
  // The document is fixed once the app is ready: serialised once, not on every request (it is
  // public, so its cost is anyone's to cause).
  let serialized: string | undefined;
  app.get('/openapi.json', { schema: { hide: true, ...PUBLIC_ROUTE } }, async (_request, reply) => {
    serialized ??= JSON.stringify(app.swagger());
    return reply.type('application/json; charset=utf-8').send(serialized);
  });
}

/**
 * The sync's body is read as text by its own parser (user-group-sync.routes.ts), group by group, so
 * its route schema has none; the document gives both forms.
 */
function documentSyncBody(document: OpenApiDocument): void {
  const operation = document.paths?.['/api/admin/user_groups/sync']?.post;
  if (!operation) return;
  operation.requestBody = {
    required: true,
    content: {
      'application/json': { schema: titleNamedSchemas(SyncBody) as unknown as Schema },
      'application/x-ndjson': {
        schema: {
          type: 'string',
          description: 'The same group objects as the JSON form, one per line (blank lines are skipped).',
        } as Schema,
      },
    },
  };
}

const GET_USER_DESCRIPTION = [
  'Answers the group with this user_group_id; when there is none, creates it from the other fields (creating needs the write scope).',
  'The fields travel in the query string: mapping, properties, tags and access_rules as JSON text (tags=["a"], URL-encoded), is_demo_group as true or false.',
  'The service also takes them as a JSON body on this GET, as the hosted product documents it, and refuses a GET with both a body and a query string (400 invalid_request); fetch and browsers cannot send a GET body, so it is not described here.',
  'Generated clients call POST /api/create_user_group (hostedCreateUserGroup) instead: the same operation with the same fields in a JSON body, with their JSON types.',
].join(' ');

/**
 * GET /api/user takes its fields from a JSON body or, without one, from the query string (see
 * user-groups.routes.ts). Clients generated from the document use fetch, which sends no GET body:
 * the document gives the query form, one parameter per field of the body schema that validates it,
 * and no requestBody (a generator would offer one fetch cannot send).
 */
function documentGetQueryForm(document: OpenApiDocument): void {
  const operation = document.paths?.['/api/user']?.get;
  const body = operation?.requestBody?.content?.['application/json']?.schema;
  if (!operation || !body?.properties) return;
  delete operation.requestBody;
  operation.description = GET_USER_DESCRIPTION;
  const required = new Set(body.required);
  operation.parameters = Object.entries(body.properties).map(([name, schema]) =>
    queryParameter(name, schema, required.has(name)),
  );
}

/**
 * A JSON document in a query value is text, published as a string whose content is that JSON
 * (JSON Schema's contentMediaType and contentSchema): a generator sends a string as it is, where
 * it would spread an object or an array over several parameters the route refuses. A JSON
 * boolean's text is the plain query value "true" or "false": a boolean, which generators send so.
 */
function queryParameter(name: string, { description, ...schema }: Schema, required: boolean): Parameter {
  const parameter = { name, in: 'query', required, ...(description === undefined ? {} : { description }) };
  if (JSON_QUERY_FIELDS.has(name) && schema.type !== 'boolean')
    return {
      ...parameter,
      description: description === undefined ? 'JSON text.' : `JSON text. ${description}`,
      schema: { type: 'string', contentMediaType: 'application/json', contentSchema: schema },
    };
  return { ...parameter, schema: JSON_QUERY_FIELDS.has(name) ? schema : textBranchOf(schema) };
}

/** Of a union (an id is a string or an integer in a body), the branch a plain query value takes: its string. */
function textBranchOf(schema: Schema): Schema {
  const strings = (node: Schema): Schema[] =>
    node.anyOf ? node.anyOf.flatMap(strings) : node.type === 'string' ? [node] : [];
  return strings(schema)[0] ?? schema;
}

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the same key with the same request within 24 hours answers with the first response again (with Idempotent-Replayed: true) instead of running twice. The same key with another request is 409 idempotency_key_reused; while the first is still running, 409 idempotency_key_in_progress. A response over 1 MiB is answered but not kept (Idempotent-Stored: false): a retry runs again. A dry run of a sync ignores the key.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]+$' },
};

/** Every write under /api takes an optional Idempotency-Key header (see idempotency.ts). */
function documentIdempotencyKey(document: OpenApiDocument): void {
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    if (!path.startsWith('/api/')) continue;
    for (const method of WRITE_METHODS) {
      const operation = operations[method.toLowerCase()];
      if (operation) operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY_PARAMETER];
    }
  }
}
