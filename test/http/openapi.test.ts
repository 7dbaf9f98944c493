import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMITTED_OPENAPI, servedOpenApiDocument } from '../../scripts/openapi-document.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/wire/contract.constants.js';
import { inject } from '../support/http-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface Operation {
  operationId?: string;
  deprecated?: boolean;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: JsonSchema }>;
  description?: string;
}
interface JsonSchema {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  oneOf?: JsonSchema[];
  required?: string[];
  additionalProperties?: unknown;
}
type Spec = {
  openapi: string;
  info: { version: string };
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, JsonSchema> };
};

// The operations generated clients call (docs/api.md#generating-a-client), by the operationId generated clients name them with.
const OPERATION_IDS: Record<string, string> = {
  'GET /api/user': 'getOrCreateUserGroup',
  'PUT /api/user': 'updateUserGroup',
  'POST /api/user': 'rotateUserGroupToken',
  'DELETE /api/user': 'deleteUserGroup',
  'POST /api/user/verify': 'verifyUserGroupToken',
  'GET /api/admin/user_groups': 'listAdminUserGroups',
  'GET /api/admin/audit_events': 'listAuditEvents',
  'POST /api/create_user_group': 'hostedCreateUserGroup',
  'POST /api/update_user_group': 'hostedUpdateUserGroup',
  'POST /api/refresh_user_group_token': 'hostedRefreshUserGroupToken',
  'DELETE /api/delete_user_group': 'hostedDeleteUserGroup',
};
// The hosted product's paths are deprecated for new code, but its get-or-create: a JSON body on a POST is
// how generated clients send that operation's fields (docs/api.md, "Generating a client").
const DEPRECATED_ALIASES = Object.keys(OPERATION_IDS).filter(
  (key) => OPERATION_IDS[key]!.startsWith('hosted') && key !== 'POST /api/create_user_group',
);

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

/** A schema with its `$ref` to components.schemas followed (the named ones are there once). */
const resolveIn =
  (spec: Spec) =>
  (schema: JsonSchema | undefined): JsonSchema | undefined => {
    const name = schema?.$ref?.replace('#/components/schemas/', '');
    return name === undefined ? schema : spec.components.schemas[name];
  };

// The bodies docs/api.md#endpoints defines: their documented schemas must name exactly these fields
// (and, where it says which are required, exactly those as required).
const CONTRACT_BODIES: Record<string, { properties: string[]; required?: string[] }> = {
  'GET /api/user': {
    properties: [
      'access_rules',
      'is_demo_group',
      'mapping',
      'name',
      'parent_user_group_id',
      'properties',
      'tags',
      'user_group_id',
    ],
    required: ['user_group_id'],
  },
  'PUT /api/user': {
    properties: [
      'access_rules',
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
  'POST /api/admin/data_sources': { properties: ['environment', 'id', 'name', 'provided_id', 'schema_id', 'shared'] },
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
  const resolve = (schema: JsonSchema | undefined) => resolveIn(spec)(schema);
  const bodyOf = (operation: Operation) => resolve(operation.requestBody?.content?.['application/json']?.schema);

  beforeAll(async () => {
    t = await createTestApp();
    const response = await inject(t.app, { method: 'GET', path: '/openapi.json' });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    spec = response.body as Spec;
    routes = routesOf(t.app.printRoutes({ commonPrefix: false }));
  });

  afterAll(() => t.close());

  // A change to the API is a deliberate one: it updates openapi.json (`npm run openapi:write`) in the
  // same commit, where review sees it; a refactoring leaves the document as it was. Clients are
  // generated from that file without a server (test/openapi-client/generators.test.ts).
  it('is the committed openapi.json: what `ugs serve` answers, byte for byte as the file holds it', async () => {
    const committed = readFileSync(COMMITTED_OPENAPI, 'utf8');
    expect(await servedOpenApiDocument()).toBe(committed);
    // This app (either engine) serves the same document, but the version a test app states.
    expect({ ...spec, info: { ...spec.info, version: 'committed' } }).toEqual({
      ...JSON.parse(committed),
      info: { ...JSON.parse(committed).info, version: 'committed' },
    });
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(spec.openapi).toMatch(/^3\.1\./);
    const validator = new Validator();
    const result = await validator.validate(structuredClone(spec) as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it("documents exactly the routes the app serves, but itself, the admin console's own (docs/adr/0024-admin-console.md) and the public documents' HEAD and OPTIONS", () => {
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
    // So are the public documents' HEAD (their GET's) and OPTIONS (the CORS preflight, docs/api.md
    // "Cross-origin"): HTTP's answers about an operation, not operations a client generates calls for.
    const apiRoutes = routes.filter(
      (route) =>
        !route.split(' ')[1]!.startsWith('/console') &&
        !/^(HEAD|OPTIONS) \/w\//.test(route) &&
        // The embed-token refresh's CORS preflight (docs/api.md "Refresh within a session"), hidden as the public documents' are.
        route !== 'OPTIONS /api/user/embed_token/refresh',
    );
    expect(routes).toEqual(
      expect.arrayContaining([
        'HEAD /w/:workspace/.well-known/jwks.json',
        'OPTIONS /w/:workspace/.well-known/jwks.json',
      ]),
    );
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

  it('documents a request body for exactly the /api operations that validate one, but GET /api/user', async () => {
    // An operation validates a body when it rejects one made of an unknown field (as unknown, or as
    // lacking a required field); one without a body schema ignores the body.
    // GET /api/user validates a body too, but documents its fields as query parameters (a
    // generated client uses fetch, which sends no GET body; the next test checks those parameters).
    const getUser = await inject(t.app, {
      method: 'GET',
      path: '/api/user',
      token: t.tokens.default.Customer.admin,
      body: { zz_not_a_field: 1 },
    });
    expect(['unknown_field', 'missing_field']).toContain(getUser.body.error.code);
    expect(spec.paths['/api/user']!.get!.requestBody).toBeUndefined();
    for (const { key, operation } of apiOperations().filter(({ key }) => key !== 'GET /api/user')) {
      const [method, path] = key.split(' ') as [string, string];
      const probe = await inject(t.app, {
        method,
        path: path.replace(/\{[^}]+\}/g, '999999'),
        token: t.tokens.default.Customer.admin,
        body: { zz_not_a_field: 1 },
      });
      // A missing query parameter (GET /api/admin/usage's team_id) is no sign of a body schema.
      const parameters = (operation.parameters ?? []) as Array<{ in: string; name: string }>;
      const queryParameters = parameters.filter((p) => p.in === 'query').map((p) => p.name);
      // An import refuses a bad line in its summary (200), as `ugs groups import` does, not the request.
      const refusedInSummary = probe.status === 200 && probe.body.import?.rejected?.length === 1;
      const validatesBody =
        refusedInSummary ||
        (probe.status === 400 &&
          ['unknown_field', 'missing_field'].includes(probe.body.error.code) &&
          !queryParameters.includes(probe.body.error.field));
      const schema = bodyOf(operation);
      expect({ documented: schema !== undefined, validatesBody }, key).toEqual({
        documented: validatesBody,
        validatesBody,
      });
      if (schema) {
        // A sync's body is an array of groups (or their NDJSON lines): each an object as strict.
        const object = schema.type === 'array' ? resolve(schema.items) : schema;
        expect(object?.type, key).toBe('object');
        expect(object?.additionalProperties, key).toBe(false);
      }
    }
  });

  it('documents the fields of the contract bodies exactly (GET /api/user: as its query parameters)', () => {
    const documented = new Map(apiOperations().map(({ key, operation }) => [key, bodyOf(operation)]));
    const query = spec.paths['/api/user']!.get!.parameters!.filter((parameter) => parameter.in === 'query');
    documented.set('GET /api/user', {
      properties: Object.fromEntries(query.map((parameter) => [parameter.name, {}])),
      required: query.filter((parameter) => parameter.required).map((parameter) => parameter.name),
    });
    for (const [key, expected] of Object.entries(CONTRACT_BODIES)) {
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
      const success = resolve(responses['200']?.content?.['application/json']?.schema);
      expect(success?.properties?.success, key).toBeDefined();
      expect(success?.required, key).toContain('success');
      for (const status of ['4XX', '5XX']) {
        const failure = resolve(responses[status]?.content?.['application/json']?.schema);
        expect(failure?.required, `${key} ${status}`).toEqual(['success', 'error']);
        expect(Object.keys(failure?.properties?.error?.properties ?? {}).sort(), `${key} ${status}`).toEqual([
          'code',
          'field',
          'index',
          'line',
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

  it('declares one API token scheme, requires it on every /api operation, and says none on the public ones', () => {
    // One scheme (Bearer, which generators fill in from a token): a generator sets every scheme an
    // operation lists, and two credential headers are 401. The other headers auth.ts reads
    // (Authorization: Token, the hosted product's Explo-Authorization) are told in its description.
    expect(spec.components.securitySchemes).toEqual({
      apiToken: {
        type: 'http',
        scheme: 'bearer',
        description: expect.stringMatching(/Authorization: Token <API_TOKEN>.*Explo-Authorization: Token <API_TOKEN>/),
      },
    });
    for (const { key, operation } of operations()) {
      // Two exceptions: the embed-token refresh, whose credential is the embed token itself, and introspection
      // at an issuer's path, which takes an API token of that issuer.
      const path = key.split(' ')[1]!;
      const authenticated =
        (path.startsWith('/api/') && path !== '/api/user/embed_token/refresh') || path.endsWith('/introspect');
      if (authenticated) expect(operation.security, key).toEqual([{ apiToken: [] }]);
      else expect(operation.security, key).toEqual([]);
    }
    for (const [type, { post }] of Object.entries(spec.webhooks)) expect(post!.security, type).toEqual([]);
  });

  it("gives every operation a unique camelCase operationId, the hosted-product aliases ids of their own, deprecated but get-or-create's", () => {
    const all = [
      ...operations(),
      ...Object.entries(spec.webhooks).map(([type, { post }]) => ({ key: `webhook ${type}`, operation: post! })),
    ];
    const ids = all.map(({ key, operation }) => {
      expect(operation.operationId, key).toMatch(/^[a-z][a-zA-Z0-9]*$/);
      return operation.operationId;
    });
    expect(new Set(ids).size).toBe(ids.length);
    const byKey = Object.fromEntries(operations().map(({ key, operation }) => [key, operation.operationId]));
    expect(byKey).toMatchObject(OPERATION_IDS);
    for (const { key, operation } of operations())
      expect(operation.deprecated ?? false, key).toBe(DEPRECATED_ALIASES.includes(key));
  });

  it('names the resources, the error envelope and the request bodies as components, referenced where they appear', () => {
    expect(Object.keys(spec.components.schemas)).toEqual(
      expect.arrayContaining([
        'UserGroup',
        'Error',
        'ApiToken',
        'Schema',
        'DataSource',
        'AuditEvent',
        'WebhookEndpoint',
        'WebhookDelivery',
        'SigningKey',
        'WebhookEvent',
        'GetOrCreateUserGroupBody',
        'UpdateUserGroupBody',
        'CreateWebhookEndpointBody',
      ]),
    );
    const getOrCreate = spec.paths['/api/user']!.get!.responses!['200']!.content!['application/json']!.schema!;
    expect(resolve(getOrCreate)!.properties!.user_group).toEqual({ $ref: '#/components/schemas/UserGroup' });
    expect(spec.paths['/api/user']!.put!.requestBody!.content!['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/UpdateUserGroupBody',
    });
    for (const { key, operation } of apiOperations())
      for (const status of ['4XX', '5XX'])
        expect(operation.responses![status]!.content!['application/json']!.schema, key).toEqual({
          $ref: '#/components/schemas/Error',
        });
    // Every schema carrying a name is the component itself, never a second copy of it.
    const copies = JSON.stringify(spec.paths).match(/"title":/g) ?? [];
    expect(copies).toEqual([]);
  });

  it('publishes ids and page sizes as integers with the bounds the server keeps, and boolean filters as booleans', () => {
    const parameter = (key: string, name: string) => {
      const [method, path] = key.split(' ') as [string, string];
      return spec.paths[path]![method.toLowerCase()]!.parameters!.find((candidate) => candidate.name === name)!.schema;
    };
    const id = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
    expect(parameter('GET /api/admin/user_groups/{team_id}', 'team_id')).toEqual(id);
    expect(parameter('GET /api/admin/data_sources/{id}', 'id')).toEqual(id);
    expect(parameter('GET /api/admin/audit_events', 'team_id')).toEqual(id);
    expect(parameter('GET /api/admin/webhook_deliveries', 'endpoint_id')).toEqual(id);
    for (const key of [
      'GET /api/admin/user_groups',
      'GET /api/admin/audit_events',
      'GET /api/admin/webhook_deliveries',
    ])
      expect(parameter(key, 'limit'), key).toEqual({ type: 'integer', minimum: 1, maximum: 1000, default: 100 });
    expect(parameter('GET /api/admin/usage/top', 'limit')).toEqual({
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 10,
    });
    expect(parameter('GET /api/admin/user_groups', 'is_demo_group')).toEqual({ type: 'boolean' });
    expect(parameter('GET /api/user', 'is_demo_group')).toEqual({ type: 'boolean' });
    // No parameter is left as digit text.
    expect(JSON.stringify(spec.paths)).not.toContain('"pattern":"^[1-9][0-9]');
  });

  it('publishes those types only: the inputs the routes refused as text are refused still, the published bounds admitted', async () => {
    // Query strings and paths are text on the wire: what the server validates did not change.
    const admin = t.tokens.default.Customer.admin;
    const get = (path: string) => inject(t.app, { method: 'GET', path, token: admin });
    const refused: Array<[path: string, field: string]> = [
      ['/api/admin/user_groups?limit=9999', 'limit'],
      ['/api/admin/user_groups?limit=1001', 'limit'],
      ['/api/admin/user_groups?limit=abc', 'limit'],
      ['/api/admin/user_groups?limit=0', 'limit'],
      ['/api/admin/user_groups?limit=1.5', 'limit'],
      ['/api/admin/user_groups?is_demo_group=maybe', 'is_demo_group'],
      ['/api/admin/user_groups?is_demo_group=1', 'is_demo_group'],
      ['/api/admin/audit_events?team_id=abc', 'team_id'],
      ['/api/admin/audit_events?team_id=0', 'team_id'],
      ['/api/admin/user_groups/abc', 'team_id'],
      ['/api/admin/user_groups/-1', 'team_id'],
      ['/api/admin/usage/top?limit=0', 'limit'],
      ['/api/admin/usage/top?limit=101', 'limit'],
      ['/api/admin/usage/top?limit=abc', 'limit'],
      ['/api/admin/usage/top?limit=1.5', 'limit'],
    ];
    for (const [path, field] of refused) {
      const response = await get(path);
      expect({ status: response.status, field: response.body.error?.field }, path).toEqual({ status: 400, field });
    }
    for (const path of [
      '/api/admin/user_groups?limit=1',
      '/api/admin/user_groups?limit=1000',
      '/api/admin/user_groups?is_demo_group=true',
      '/api/admin/user_groups?is_demo_group=false',
      '/api/admin/audit_events?team_id=9007199254740991',
      '/api/admin/usage/top?limit=1',
      '/api/admin/usage/top?limit=100',
    ])
      expect((await get(path)).status, path).toBe(200);
  });

  it('publishes every integer, over the whole document, as an integer with its bounds, and no number as digit text', () => {
    // A string whose pattern admits digits only stands for a number (an id, a page size in a query).
    const isDigitsPattern = (pattern: string) => /^\^?(?:\\d|\[[0-9-]+\]|\{\d+(?:,\d*)?\}|[*+?])+\$?$/.test(pattern);
    expect(isDigitsPattern('^[1-9][0-9]{0,15}$') && isDigitsPattern('^[0-9]{1,4}$')).toBe(true);
    expect(isDigitsPattern('^\\d{4}-\\d{2}-\\d{2}$')).toBe(false);

    const integers: string[] = [];
    const faults: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((item, index) => walk(item, `${at}/${index}`));
      if (node === null || typeof node !== 'object') return;
      const schema = node as JsonSchema & { pattern?: unknown };
      const types = [schema.type].flat();
      const wholeEnum = schema.enum !== undefined && schema.enum.every(Number.isSafeInteger);
      if (types.includes('integer')) {
        integers.push(at);
        const bounded = typeof schema.minimum === 'number' && typeof schema.maximum === 'number';
        // A one-value (or few-value) enum is its own bound: `success: 1`.
        if (!bounded && !wholeEnum) faults.push(`${at}: an integer without minimum and maximum`);
      }
      if (types.includes('number') && wholeEnum) faults.push(`${at}: integers published as a number`);
      if (types.includes('string') && typeof schema.pattern === 'string' && isDigitsPattern(schema.pattern))
        faults.push(`${at}: digit text ${schema.pattern}`);
      for (const [key, value] of Object.entries(node)) walk(value, `${at}/${key}`);
    };
    walk(spec, '#');
    expect(faults).toEqual([]);
    // The walk saw the document's integers: ids, page sizes, counts, the success flag.
    expect(integers.length).toBeGreaterThan(50);
    expect(integers).toEqual(
      expect.arrayContaining([
        '#/components/schemas/UserGroup/properties/team_id',
        '#/components/schemas/UserGroupResponse/properties/success',
      ]),
    );
  });

  it("publishes GET /api/user's JSON-valued fields as strings of JSON text, and says what a body and a query string together get", async () => {
    const getUser = spec.paths['/api/user']!.get!;
    const jsonText = (getUser.parameters ?? []).filter((parameter) =>
      ['mapping', 'properties', 'tags', 'access_rules'].includes(parameter.name),
    );
    expect(jsonText).toHaveLength(4);
    for (const { name, schema } of jsonText)
      expect(schema, name).toEqual({
        type: 'string',
        contentMediaType: 'application/json',
        contentSchema: expect.any(Object),
      });
    // The sentence is true: both at once are refused.
    expect(getUser.description).toContain('refuses a GET with both a body and a query string (400 invalid_request)');
    const both = await inject(t.app, {
      method: 'GET',
      path: '/api/user?user_group_id=openapi-both',
      token: t.tokens.default.Customer.admin,
      body: { user_group_id: 'openapi-both' },
    });
    expect({ status: both.status, code: both.body.error?.code }).toEqual({ status: 400, code: 'invalid_request' });
    // Generated clients are sent to the body route, which is not deprecated.
    expect(getUser.description).toContain('POST /api/create_user_group');
    const byPost = spec.paths['/api/create_user_group']!.post!;
    expect(byPost.deprecated).toBeUndefined();
    expect(byPost.description).toContain('the operation for generated clients');
  });

  it('publishes webhook event selections as event types or exactly ["*"], and no event type "*"', () => {
    const eventType = spec.components.schemas.WebhookEventType!;
    expect(eventType.enum).toEqual([...WEBHOOK_EVENT_TYPES]);
    const events = spec.components.schemas.CreateWebhookEndpointBody!.properties!.events!;
    expect(events.oneOf).toEqual([
      expect.objectContaining({ type: 'array', items: { $ref: '#/components/schemas/WebhookEventType' } }),
      { type: 'array', items: { type: 'string', enum: ['*'] }, minItems: 1, maxItems: 1 },
    ]);
    expect(spec.components.schemas.WebhookEvent!.properties!.type).toEqual({
      $ref: '#/components/schemas/WebhookEventType',
    });
  });

  it('names the public URL as its server', async () => {
    expect(spec.servers).toEqual([{ url: 'http://127.0.0.1:8080', description: 'This deployment.' }]);
    const elsewhere = await createTestApp({ publicUrl: () => 'https://ugs.example.com' });
    try {
      const response = await inject(elsewhere.app, { method: 'GET', path: '/openapi.json' });
      expect(response.body.servers).toEqual([{ url: 'https://ugs.example.com', description: 'This deployment.' }]);
    } finally {
      await elsewhere.close();
    }
  });

  it('documents what a webhook endpoint receives: every event type, its signature headers and the payload', () => {
    const { webhooks } = spec;
    expect(Object.keys(webhooks)).toEqual([...WEBHOOK_EVENT_TYPES]);
    for (const { post } of Object.values(webhooks)) {
      expect(post!.parameters!.map((parameter) => parameter.name)).toEqual([
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]);
      expect(Object.keys(bodyOf(post!)!.properties!)).toEqual([
        'id',
        'type',
        'created_at',
        'workspace',
        'environment',
        'sync_id',
        'data',
      ]);
    }
  });
});
