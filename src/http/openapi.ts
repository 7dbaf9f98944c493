import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { WEBHOOK_EVENT_TYPES } from '../wire/contract.constants.js';
import { WRITE_METHODS } from './idempotency.js';
import { WebhookEventPayload } from '../wire/webhooks.schemas.js';

/** Registers the generator before the routes so that it sees every route schema as it is added. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    transformObject: (documents) => {
      if (!('openapiObject' in documents)) return documents.swaggerObject;
      documentGetQueryForm(documents.openapiObject as OpenApiDocument);
      documentIdempotencyKey(documents.openapiObject as OpenApiDocument);
      return documents.openapiObject;
    },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'User Group Service',
        version,
        description: 'User groups of an embedded-analytics product: their tokens, properties and data-source mappings.',
      },
      webhooks: webhookDescriptions(),
      components: {
        securitySchemes: {
          apiToken: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'Send "Authorization: Token <API_TOKEN>" ("Bearer" is accepted too).',
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

/** What an endpoint receives (SPEC §13), one entry per event type, in OpenAPI 3.1's `webhooks`. */
function webhookDescriptions() {
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          summary: `${type}: POSTed to every enabled endpoint that wants it`,
          tags: ['webhooks'],
          parameters: SIGNATURE_HEADERS.map(([name, description]) => ({
            name,
            in: 'header' as const,
            required: true,
            description,
            schema: { type: 'string' as const },
          })),
          requestBody: { required: true, content: { 'application/json': { schema: WebhookEventPayload as object } } },
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
  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) => {
    serialized ??= JSON.stringify(app.swagger());
    return reply.type('application/json; charset=utf-8').send(serialized);
  });
}

type Schema = { properties?: Record<string, Schema>; required?: string[]; description?: string };
type Operation = {
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  parameters?: unknown[];
};
type OpenApiDocument = { paths?: Record<string, Record<string, Operation>> };

// Query values that carry JSON text rather than plain strings (see user-groups.routes.ts).
const JSON_QUERY_FIELDS = new Set(['mapping', 'properties']);

/**
 * GET /api/user takes its fields from a JSON body or, without one, from the query string. Fastify
 * validates the query form through the body schema, so derive its documentation from that schema
 * too: one parameter per body field, and the body becomes optional.
 */
function documentGetQueryForm(document: OpenApiDocument): void {
  const operation = document.paths?.['/api/user']?.get;
  const body = operation?.requestBody?.content?.['application/json']?.schema;
  if (!operation?.requestBody || !body?.properties) return;
  operation.requestBody.required = false;
  operation.parameters = Object.entries(body.properties).map(([name, schema]) => ({
    name,
    in: 'query',
    required: false,
    description:
      `${schema.description ?? ''} Only when the request has no body${JSON_QUERY_FIELDS.has(name) ? '; as JSON text' : ''}.`.trim(),
    ...(JSON_QUERY_FIELDS.has(name) ? { content: { 'application/json': { schema } } } : { schema }),
  }));
}

const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the same key with the same request within 24 hours answers with the first response again (with Idempotent-Replayed: true) instead of running twice. The same key with another request is 409 idempotency_key_reused; while the first is still running, 409 idempotency_key_in_progress.',
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
