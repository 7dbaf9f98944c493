import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Tenant } from '../../src/domain/tenancy.js';
import { inject, type ApiRequest, type ApiResponse } from '../support/http-client.js';
import type { TestApp } from '../support/test-app.js';
import { type DatabaseReader, useTestAppWithReader } from '../security/helpers.js';
import { issueApiToken } from '../support/api-token-issuer.js';
import { makeGroup } from '../support/group-maker.js';

const NUM_RUNS = 200;

/** Which ids a path parameter of an operation refers to. */
type IdKind = 'dataSource' | 'apiToken' | 'teamId';

interface Operation {
  method: string;
  /** With `{id}` where the route takes an id. */
  path: string;
  /** The body fields the operation knows. */
  fields: readonly string[];
  id?: IdKind;
}

const OPERATIONS: readonly Operation[] = [
  {
    method: 'GET',
    path: '/api/user',
    fields: ['user_group_id', 'name', 'mapping', 'properties', 'parent_user_group_id', 'is_demo_group', 'tags'],
  },
  {
    method: 'PUT',
    path: '/api/user',
    fields: [
      'user_group_id',
      'new_user_group_id',
      'name',
      'mapping',
      'properties',
      'parent_user_group_id',
      'is_demo_group',
      'tags',
    ],
  },
  { method: 'POST', path: '/api/user', fields: ['current_token'] },
  { method: 'DELETE', path: '/api/user', fields: ['current_token', 'user_group_id', 'data_source_provided_id'] },
  { method: 'POST', path: '/api/user/verify', fields: ['token'] },
  { method: 'POST', path: '/api/admin/schemas', fields: ['name'] },
  { method: 'GET', path: '/api/admin/schemas', fields: [] },
  { method: 'POST', path: '/api/admin/data_sources', fields: ['provided_id', 'name', 'schema_id', 'environment'] },
  { method: 'GET', path: '/api/admin/data_sources', fields: [] },
  { method: 'GET', path: '/api/admin/data_sources/{id}', fields: [], id: 'dataSource' },
  {
    method: 'PATCH',
    path: '/api/admin/data_sources/{id}',
    fields: ['provided_id', 'name', 'schema_id'],
    id: 'dataSource',
  },
  { method: 'DELETE', path: '/api/admin/data_sources/{id}', fields: [], id: 'dataSource' },
  { method: 'POST', path: '/api/admin/api_tokens', fields: ['name', 'scope', 'environment'] },
  { method: 'GET', path: '/api/admin/api_tokens', fields: [] },
  { method: 'PATCH', path: '/api/admin/api_tokens/{id}', fields: ['rate_limit'], id: 'apiToken' },
  { method: 'DELETE', path: '/api/admin/api_tokens/{id}', fields: [], id: 'apiToken' },
  { method: 'GET', path: '/api/admin/user_groups', fields: [] },
  { method: 'GET', path: '/api/admin/user_groups/{id}', fields: [], id: 'teamId' },
  { method: 'GET', path: '/api/admin/audit_events', fields: [] },
];
const PATHS = [...new Map(OPERATIONS.map((operation) => [operation.path, operation])).values()];
const QUERY_OPERATIONS = OPERATIONS.filter((operation) => operation.method === 'GET');
const WRITE_OPERATIONS = OPERATIONS.filter((operation) => operation.method !== 'GET');
// HEAD is left out: its answer has no body by definition, so there is no envelope to check.
const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS'];
const FIELDS = [...new Set(OPERATIONS.flatMap((operation) => operation.fields))];
const QUERY_FIELDS = [
  ...FIELDS,
  'environment',
  'q',
  'parent',
  'tag',
  'limit',
  'cursor',
  'team_id',
  'action',
  'since',
  'until',
];
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset="UTF-8"',
  'application/json; charset=latin1',
  'Application/JSON',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/json-patch+json',
  '*/*',
];

// Just over the 1 MiB body limit.
const OVERSIZED_BODY = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });

const SNAKE_CASE = /^[a-z]+(?:_[a-z]+)*$/;

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let level = 1; level < depth; level += 1) value = { level: value };
  return value;
}

const weighted = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });

describe('random and malformed requests', () => {
  let t: TestApp;
  let reader: DatabaseReader;
  let tenant: Tenant;
  const statuses = new Map<number, number>();
  // Filled in once the fixtures exist; the arbitraries read them lazily.
  const known = {
    tokens: [] as string[],
    schemaIds: [] as number[],
    ids: { dataSource: [], apiToken: [], teamId: [] } as Record<IdKind, number[]>,
  };

  const fixture = useTestAppWithReader();

  beforeAll(async () => {
    ({ t, reader, tenant } = fixture);
    const admin = t.tokens.default.Customer.admin;
    const schema = await inject(t.app, {
      method: 'POST',
      path: '/api/admin/schemas',
      token: admin,
      body: { name: 'sales' },
    });
    known.schemaIds.push(schema.body.schema.id);
    for (const providedId of ['warehouse', 'lake']) {
      const body = { provided_id: providedId, name: providedId, schema_id: schema.body.schema.id };
      const dataSource = await inject(t.app, { method: 'POST', path: '/api/admin/data_sources', token: admin, body });
      known.ids.dataSource.push(dataSource.body.data_source.id);
    }
    for (const id of ['fz-1', 'fz-2', 'fz-3']) {
      const group = await makeGroup(
        { target: (req) => inject(t.app, req), token: t.tokens.default.Customer.write },
        {
          id: id,
          mapping: { [known.schemaIds[0]!]: 'warehouse' },
        },
      );
      known.tokens.push(group.token);
      known.ids.teamId.push(group.team_id);
    }
    // Tokens the fuzzer may revoke; the ones it sends with are never among the ids it is given.
    for (const name of ['expendable-1', 'expendable-2']) await issueApiToken(t, { scope: 'read', name });
    const expendable = (await t.runtime.store.listApiTokens(tenant.workspaceId)).filter((token) =>
      token.name.startsWith('expendable-'),
    );
    known.ids.apiToken.push(...expendable.map((token) => token.id));
  });

  /** The invariants every request must keep, whatever it carries. */
  async function expectHandled(req: Omit<ApiRequest, 'token'>, scope: 'write' | 'admin'): Promise<ApiResponse> {
    const before = await reader.snapshot(tenant);
    const response = await inject(t.app, { ...req, token: t.tokens.default.Customer[scope] });
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    const context = `${req.method} ${req.path} ${String(req.rawBody ?? JSON.stringify(req.body)).slice(0, 200)} -> ${response.status} ${response.raw.slice(0, 300)}`;
    expect(response.status, context).toBeLessThan(500);
    expect(response.headers['content-type'], context).toMatch(/^application\/json/);
    expect(response.body?.success, context).toBe(response.status === 200 ? 1 : 0);
    if (response.status >= 400) {
      expect(response.body.error.code, context).toMatch(SNAKE_CASE);
      expect(response.body.error.message, context).toEqual(expect.any(String));
      expect(response.body.error.request_id, context).toBe(response.headers['x-request-id']);
      expect(await reader.snapshot(tenant), context).toEqual(before);
    }
    return response;
  }

  const run = <T>(property: fc.IAsyncProperty<T>) => fc.assert(property, { numRuns: NUM_RUNS });
  const scope = fc.constantFrom('write' as const, 'admin' as const);

  /** A path parameter: an id of the right kind that exists, or one that does not, or no id at all. */
  const pathParameter = (kind: IdKind | undefined) =>
    fc.oneof(
      weighted(
        3,
        fc
          .constant(null)
          .chain(() => fc.constantFrom(...(kind ? known.ids[kind] : [1])))
          .map(String),
      ),
      weighted(
        1,
        fc.constantFrom(
          '0',
          '-1',
          '1e3',
          '1.0',
          '007',
          '9007199254740993',
          '99999999999999999999',
          '\u0661',
          '%00',
          'null',
        ),
      ),
      weighted(1, fc.string({ maxLength: 12 }).map(encodeURIComponent)),
    );
  /** An operation with its path parameter filled in. */
  const target = (operations: readonly Operation[]) =>
    fc
      .constantFrom(...operations)
      .chain((operation) =>
        pathParameter(operation.id).map((id) => ({ ...operation, path: operation.path.replace('{id}', id) })),
      );
  const anyTarget = target(OPERATIONS).map(({ method, path }) => ({ method, path }));

  // Values that sit on or near the real rules, mixed with anything at all.
  const fieldValue = fc.oneof(
    weighted(3, fc.anything({ maxDepth: 3 })),
    weighted(
      3,
      fc.constantFrom(
        'fz-1',
        'fz-2',
        'fz-3',
        'fz-new',
        'warehouse',
        'sales',
        'Customer',
        'Testing',
        'Staging',
        'read',
        'admin',
        '',
        ' ',
        'a\u0000b',
        'x'.repeat(257),
        '\u202e',
      ),
    ),
    weighted(1, fc.integer({ min: -10, max: 10 })),
    weighted(1, fc.constantFrom(Number.MAX_SAFE_INTEGER + 2, -1e308, 1.5, 0)),
    weighted(
      2,
      fc.constantFrom(0, 1, 2).map((i) => known.tokens[i]),
    ),
    weighted(
      2,
      fc
        .string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 })
        .map((hex) => `ugt_${hex}`),
    ),
    weighted(
      1,
      fc.constant(null).map(() => ({ [known.schemaIds[0]!]: 'warehouse' })),
    ),
    weighted(
      1,
      fc.constant(null).map(() => ({ [known.schemaIds[0]!]: known.ids.dataSource[1] })),
    ),
    weighted(
      1,
      fc.constant(null).map(() => known.schemaIds[0]),
    ),
    weighted(1, fc.dictionary(fc.string({ maxLength: 4 }), fc.oneof(fc.string({ maxLength: 6 }), fc.integer()))),
    weighted(1, fc.integer({ min: 1, max: 40 }).map(nested)),
    weighted(1, fc.constant({ blob: 'x'.repeat(70_000) })),
    weighted(1, fc.object({ maxDepth: 2 })),
    weighted(
      1,
      fc.record(
        { per_second: fc.oneof(fc.double(), fc.integer()), burst: fc.oneof(fc.integer(), fc.double()) },
        { requiredKeys: [] },
      ),
    ),
  );
  const fieldObject = fc.record(Object.fromEntries(FIELDS.map((field) => [field, fieldValue])), { requiredKeys: [] });

  const queryValue = fc.oneof(
    weighted(3, fc.string({ unit: 'binary', maxLength: 30 })),
    weighted(1, fc.json({ maxDepth: 2 })),
    weighted(
      2,
      fc.constantFrom('Customer', 'Testing', 'fz', 'fz-1', '1', '1000', '1001', '0', '-1', 'user_group.created'),
    ),
    weighted(
      2,
      fc.constantFrom(
        '2026-11-22T10:00:00Z',
        '2026-11-22T10:00:00.000+05:30',
        '2026-19-39T29:59:59Z',
        '2026-02-30T10:00:00Z',
        '0000-00-00T00:00:00Z',
        '+275760-09-13T00:00:00.001Z',
      ),
    ),
    weighted(
      2,
      fc
        .constantFrom('c1.5', 'c1.-1', 'c1.1e400', 'c2.5', 'c1.', '')
        .map((text) => Buffer.from(text).toString('base64url')),
    ),
  );

  it('answers any JSON value as the body', () =>
    run(
      fc.asyncProperty(anyTarget, scope, fc.anything(), async (request, tokenScope, value) => {
        const rawBody = JSON.stringify(value);
        await expectHandled({ ...request, ...(rawBody === undefined ? {} : { rawBody }) }, tokenScope);
      }),
    ));

  it('answers any JSON text as the body', () =>
    run(
      fc.asyncProperty(
        anyTarget,
        scope,
        fc.oneof(weighted(9, fc.json()), weighted(1, fc.constant(OVERSIZED_BODY))),
        async (request, tokenScope, rawBody) => {
          await expectHandled({ ...request, rawBody }, tokenScope);
        },
      ),
    ));

  it('answers objects with the real field names and random values', () =>
    run(
      fc.asyncProperty(
        target(OPERATIONS),
        scope,
        fieldObject,
        fc.oneof(
          weighted(4, fc.constant(undefined)),
          weighted(1, fc.constantFrom(...FIELDS, 'user_groupid', '__proto__', 'constructor')),
        ),
        async ({ method, path, fields }, tokenScope, values, stray) => {
          // The operation's own fields, now and then with one that belongs elsewhere (or nowhere).
          const body = Object.fromEntries(Object.entries(values).filter(([field]) => fields.includes(field)));
          if (stray !== undefined) Object.defineProperty(body, stray, { value: values[stray] ?? 1, enumerable: true });
          await expectHandled({ method, path, body }, tokenScope);
        },
      ),
    ));

  it('answers any string as the raw body, under any content type', () =>
    run(
      fc.asyncProperty(
        anyTarget,
        scope,
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.oneof(fc.constantFrom(...CONTENT_TYPES), fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 40 })),
        async (request, tokenScope, rawBody, contentType) => {
          await expectHandled({ ...request, rawBody, headers: { 'content-type': contentType } }, tokenScope);
        },
      ),
    ));

  // A few keys come back again and again, so replays and reuse with another request happen too.
  const idempotencyKey = fc.oneof(
    weighted(3, fc.constantFrom('fz-key-1', 'fz-key-2', 'fz-key-3')),
    weighted(2, fc.string({ unit: 'grapheme-ascii', maxLength: 300 })),
    weighted(1, fc.constantFrom('', ' ', 'a b', 'x'.repeat(255), 'x'.repeat(256), 'ключ', 'a,b', 'a, b')),
  );

  it('answers any Idempotency-Key on any write', () =>
    run(
      fc.asyncProperty(
        target(WRITE_OPERATIONS),
        scope,
        fieldObject,
        idempotencyKey,
        async ({ method, path, fields }, tokenScope, values, key) => {
          const body = Object.fromEntries(Object.entries(values).filter(([field]) => fields.includes(field)));
          await expectHandled({ method, path, body, headers: { 'idempotency-key': key } }, tokenScope);
        },
      ),
    ));

  it('answers any method on every path', () =>
    run(
      fc.asyncProperty(
        fc.constantFrom(...METHODS),
        target(PATHS),
        scope,
        fc.option(fc.json(), { nil: undefined }),
        async (method, { path }, tokenScope, rawBody) => {
          await expectHandled({ method, path, ...(rawBody === undefined ? {} : { rawBody }) }, tokenScope);
        },
      ),
    ));

  it('answers every GET with any query string', () =>
    run(
      fc.asyncProperty(
        target(QUERY_OPERATIONS),
        fc.array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_FIELDS), fc.string({ maxLength: 8 })), queryValue), {
          maxLength: 6,
        }),
        scope,
        async ({ method, path }, entries, tokenScope) => {
          const query = new URLSearchParams(entries).toString();
          await expectHandled({ method, path: `${path}${query ? `?${query}` : ''}` }, tokenScope);
        },
      ),
    ));

  // What an outside review found answered with a 500 or stored altered: each value below
  // is one the service must refuse wherever a field of the request carries it.
  const deepText = fc
    .tuple(fc.integer({ min: 18, max: 5000 }), fc.constantFrom(['{"a":', '}'], ['[', ']']))
    .map(([depth, [open, close]]) => `${open.repeat(depth)}1${close.repeat(depth)}`);
  const inexactNumber = fc.oneof(
    fc.constantFrom(
      '1e400',
      '-1e400',
      '1e309',
      '12345678901234567890',
      '9007199254740992',
      '-9007199254740993',
      '1e16',
      '-2e300',
    ),
    fc
      .tuple(fc.constantFrom('', '-'), fc.bigInt({ min: 2n ** 53n, max: 2n ** 80n }))
      .map(([sign, big]) => `${sign}${big}`),
  );
  const illFormedString = fc
    .tuple(
      fc.string({ maxLength: 6 }),
      fc.constantFrom('\\ud800', '\\udbff', '\\udc00', '\\udfff', '\\ud83d', '\\u0000'),
      fc.string({ maxLength: 6 }),
    )
    .map(([before, bad, after]) => `${JSON.stringify(before).slice(0, -1)}${bad}${JSON.stringify(after).slice(1)}`);
  const longName = fc.integer({ min: 257, max: 200_000 }).map((length) => JSON.stringify('n'.repeat(length)));
  /** A JSON text that can be put where a value goes, and is refused there. */
  const hostileValue = fc.oneof(
    deepText,
    inexactNumber.map((number) => `{"n":${number}}`),
    illFormedString,
    illFormedString.map((text) => `{${text}:1}`),
  );
  const BODY_OPERATIONS = OPERATIONS.filter((operation) => operation.fields.length > 0);

  it('refuses deep, inexact, ill-formed, repeated and oversized content in any field, changing nothing', () =>
    run(
      fc.asyncProperty(
        target(BODY_OPERATIONS),
        fc.constantFrom('value', 'properties', 'duplicate', 'name'),
        hostileValue,
        fc.oneof(hostileValue, inexactNumber),
        longName,
        async ({ method, path, fields }, where, value, property, name) => {
          const field = JSON.stringify(fields[0]);
          const rawBody = {
            // The defect as the value of one of the operation's own fields.
            value: `{${field}:${value}}`,
            // Inside properties, where any JSON is otherwise welcome (only GET and PUT /api/user have it).
            properties: `{${field}:"fz-1","properties":{"p":${property}}}`,
            duplicate: `{${field}:"a","x":{"k":1},${field}:"b"}`,
            name: `{${field}:"fz-1",${name}:1}`,
          }[where];
          const response = await expectHandled({ method, path, rawBody }, 'admin');
          expect(response.status, `${method} ${path} ${rawBody.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
          if (where === 'name') expect(response.raw.length).toBeLessThan(4096);
        },
      ),
    ));

  it('refuses bytes that are not UTF-8 in a body, changing nothing', () =>
    run(
      fc.asyncProperty(
        target(BODY_OPERATIONS),
        fc.uint8Array({ minLength: 1, maxLength: 8 }).filter((bytes) => {
          try {
            new TextDecoder('utf-8', { fatal: true }).decode(bytes);
            return false;
          } catch {
            return true;
          }
        }),
        async ({ method, path, fields }, bytes) => {
          const rawBody = Buffer.concat([Buffer.from(`{"${fields[0]}":"`), Buffer.from(bytes), Buffer.from('"}')]);
          const response = await expectHandled({ method, path, rawBody }, 'admin');
          expect(response.status).toBeGreaterThanOrEqual(400);
        },
      ),
    ));

  // Bytes no query value may carry, whichever parameter it is.
  const illFormedQueryText = fc.constantFrom('%00', 'a%00', '%FF', '%C3', '%ED%A0%80', '%F4%90%80%80', '%C0%AF');
  // JSON texts refused where a query value is JSON (mapping, properties, tags and is_demo_group of GET /api/user; elsewhere they are unknown).
  const hostileQueryJson = fc
    .oneof(
      illFormedString,
      deepText.filter((text) => text.length < 4000),
      inexactNumber.map((number) => `{"n":${number}}`),
      fc.constantFrom('{"k":1,"k":2}', '{"__proto__":{"x":1}}'),
    )
    .map(encodeURIComponent);

  it('refuses ill-formed query values on every GET, changing nothing', () =>
    run(
      fc.asyncProperty(
        target(QUERY_OPERATIONS),
        fc.oneof(
          fc.tuple(fc.constantFrom(...QUERY_FIELDS), illFormedQueryText),
          fc.tuple(fc.constantFrom('mapping', 'properties', 'tags', 'is_demo_group'), hostileQueryJson),
        ),
        async ({ method, path }, [field, value]) => {
          // A group id alongside, so that GET /api/user would otherwise succeed.
          const query = `${field}=${value}${field === 'user_group_id' ? '' : '&user_group_id=fz-1'}`;
          const response = await expectHandled({ method, path: `${path}?${query}` }, 'admin');
          expect(response.status, `${path}?${query.slice(0, 100)}`).toBeGreaterThanOrEqual(400);
        },
      ),
    ));

  it('met successes and every kind of rejection along the way, and the process is still up', async () => {
    // The properties above are only as strong as the variety of outcomes they reached.
    for (const status of [200, 400, 403, 404, 405, 409, 413, 415]) {
      expect(
        statuses.get(status) ?? 0,
        `responses with status ${status} among ${JSON.stringify(Object.fromEntries(statuses))}`,
      ).toBeGreaterThan(0);
    }
    const health = await inject(t.app, { method: 'GET', path: '/healthz' });
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok', version: expect.any(String) });
  });
});
