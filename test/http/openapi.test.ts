import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/models.js';
import { inject } from '../support/http-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface Operation {
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string }>;
}
interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: unknown;
}
type Spec = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown> };
};

/**
 * The routes Fastify knows, read from `printRoutes` (a tree: each node's path continues its
 * parent's, and routed nodes end with their methods in parentheses), as "METHOD /path" strings.
 */
function routesOf(tree: string): string[] {
  const routes: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:│ {3}| {4})*)[├└]── (\S+)(?: \(([^)]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    const path = (stack[depth - 1] ?? '') + match[2]!;
    stack.push(path);
    for (const method of match[3]?.split(', ') ?? []) routes.push(`${method} ${path}`);
  }
  return routes.sort();
}

const toOpenApiPath = (path: string) => path.replace(/:([^/]+)/g, '{$1}');

// The bodies SPEC §5 and §6 define: their documented schemas must name exactly these fields
// (and, where SPEC §5 says which are required, exactly those as required).
const SPEC_BODIES: Record<string, { properties: string[]; required?: string[] }> = {
  'GET /api/user': {
    properties: ['is_demo_group', 'mapping', 'name', 'parent_user_group_id', 'properties', 'tags', 'user_group_id'],
    required: ['user_group_id'],
  },
  'PUT /api/user': {
    properties: [
      'is_demo_group',
      'mapping',
      'name',
      'new_user_group_id',
      'parent_user_group_id',
      'properties',
      'tags',
      'user_group_id',
    ],
    required: ['user_group_id'],
  },
  'POST /api/user': { properties: ['current_token'], required: ['current_token'] },
  'DELETE /api/user': { properties: ['current_token', 'data_source_provided_id', 'user_group_id'], required: [] },
  'POST /api/user/verify': { properties: ['token'], required: ['token'] },
  'POST /api/admin/schemas': { properties: ['id', 'name'] },
  'POST /api/admin/data_sources': { properties: ['environment', 'id', 'name', 'provided_id', 'schema_id'] },
};

describe('GET /openapi.json', () => {
  let t: TestApp;
  let spec: Spec;
  let routes: string[];
  const operations = () =>
    Object.entries(spec.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        key: `${method.toUpperCase()} ${path}`,
        path,
        operation,
      })),
    );
  const apiOperations = () => operations().filter(({ path }) => path.startsWith('/api/'));

  beforeAll(async () => {
    t = await createTestApp();
    const response = await inject(t.app, { method: 'GET', path: '/openapi.json' });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    spec = response.body as Spec;
    routes = routesOf(t.app.printRoutes({ commonPrefix: false }));
  });

  afterAll(() => t.close());

  // A change to the API is a deliberate one: it updates this file (vitest -u) in the same commit,
  // where review sees it; a refactoring leaves the document byte for byte as it was.
  it('is byte-identical to the committed document', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    await expect(response.body).toMatchFileSnapshot('./openapi.snapshot.json');
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(spec.openapi).toMatch(/^3\.1\./);
    const validator = new Validator();
    const result = await validator.validate(structuredClone(spec) as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents exactly the routes the app serves, but itself and the admin console\'s own (docs/decisions.md, "Admin console")', () => {
    // Guards the route reader: it must see the routes every deployment has.
    expect(routes).toEqual(
      expect.arrayContaining([
        'GET /healthz',
        'GET /openapi.json',
        'GET /api/user',
        'POST /api/user/verify',
        'POST /console/session',
      ]),
    );
    // The console's pages and session are hidden on purpose: they are the console's, not the API's.
    const apiRoutes = routes.filter((route) => !route.split(' ')[1]!.startsWith('/console'));
    for (const route of apiRoutes) {
      const [method, path] = route.split(' ') as [string, string];
      expect(t.app.hasRoute({ method: method as 'GET', url: path }), route).toBe(true);
    }
    const served = apiRoutes.filter((route) => route !== 'GET /openapi.json').map((route) => toOpenApiPath(route));
    expect(
      operations()
        .map(({ key }) => key)
        .sort(),
    ).toEqual(served.sort());
  });

  it('documents a request body for exactly the /api operations that validate one', async () => {
    // An operation validates a body when it rejects one made of an unknown field (as unknown, or as
    // lacking a required field); one without a body schema ignores the body.
    for (const { key, operation } of apiOperations()) {
      const [method, path] = key.split(' ') as [string, string];
      const probe = await inject(t.app, {
        method,
        path: path.replace(/\{[^}]+\}/g, '999999'),
        token: t.tokens.default.Customer.admin,
        body: { zz_not_a_field: 1 },
      });
      const validatesBody = probe.status === 400 && ['unknown_field', 'missing_field'].includes(probe.body.error.code);
      const schema = operation.requestBody?.content?.['application/json']?.schema;
      expect({ documented: schema !== undefined, validatesBody }, key).toEqual({
        documented: validatesBody,
        validatesBody,
      });
      if (schema) {
        expect(schema.type, key).toBe('object');
        expect(schema.additionalProperties, key).toBe(false);
      }
    }
  });

  it('documents the fields of the SPEC-defined bodies exactly', () => {
    const documented = new Map(
      apiOperations().map(({ key, operation }) => [key, operation.requestBody?.content?.['application/json']?.schema]),
    );
    for (const [key, expected] of Object.entries(SPEC_BODIES)) {
      const schema = documented.get(key);
      expect(Object.keys(schema?.properties ?? {}).sort(), key).toEqual(expected.properties);
      if (expected.required) expect([...(schema?.required ?? [])].sort(), key).toEqual(expected.required);
    }
  });

  it('gives every /api operation a 200 response and the error envelope for 4xx and 5xx', () => {
    for (const { key, operation } of apiOperations()) {
      const responses = Object.fromEntries(
        Object.entries(operation.responses ?? {}).map(([status, response]) => [status.toUpperCase(), response]),
      );
      const success = responses['200']?.content?.['application/json']?.schema;
      expect(success?.properties?.success, key).toBeDefined();
      expect(success?.required, key).toContain('success');
      for (const status of ['4XX', '5XX']) {
        const failure = responses[status]?.content?.['application/json']?.schema;
        expect(failure?.required, `${key} ${status}`).toEqual(['success', 'error']);
        expect(Object.keys(failure?.properties?.error?.properties ?? {}).sort(), `${key} ${status}`).toEqual([
          'code',
          'field',
          'message',
          'request_id',
        ]);
      }
    }
  });

  it('documents the optional Idempotency-Key header on every /api write, and on no read', () => {
    for (const { key, operation } of apiOperations()) {
      const header = operation.parameters?.find(
        (parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key',
      );
      expect(header !== undefined, key).toBe(!key.startsWith('GET '));
    }
  });

  it('declares the API token scheme and requires it on every /api operation, and on no probe', () => {
    expect(spec.components.securitySchemes.apiToken).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'Authorization',
    });
    for (const { key, operation } of operations()) {
      if (key.split(' ')[1]!.startsWith('/api/')) expect(operation.security, key).toEqual([{ apiToken: [] }]);
      else expect(operation.security ?? [], key).toEqual([]);
    }
  });

  it('documents what a webhook endpoint receives: every event type, its signature headers and the payload', () => {
    const webhooks = (
      spec as unknown as {
        webhooks: Record<
          string,
          {
            post: {
              parameters: Array<{ name: string }>;
              requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
            };
          }
        >;
      }
    ).webhooks;
    expect(Object.keys(webhooks)).toEqual([...WEBHOOK_EVENT_TYPES]);
    for (const { post } of Object.values(webhooks)) {
      expect(post.parameters.map((parameter) => parameter.name)).toEqual([
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]);
      expect(Object.keys(post.requestBody.content['application/json']!.schema.properties)).toEqual([
        'id',
        'type',
        'created_at',
        'workspace',
        'environment',
        'data',
      ]);
    }
  });
});
