import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';

/** Registers the generator before the routes so that it sees every route schema as it is added. */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'User Group Service',
        version,
        description: 'User groups of an embedded-analytics product: their tokens, properties and data-source mappings.',
      },
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

export function registerOpenApiRoute(app: FastifyInstance): void {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
