import { beforeAll, describe, expect, it } from 'vitest';
import type { DataSourceRecord } from '../../src/domain/data-sources/data-source.records.js';
import {
  bodyOfSize,
  expectError,
  expectSuccess,
  expectUnchanged,
  nestedObject,
  propertiesOfSize,
  seedCatalog,
  seedDataSource,
  seedSchema,
  snapshotDatabase,
  TRANSPORTS,
  useClient,
  type Catalog,
} from './helpers.js';
import { uniqueId } from '../support/unique-id.js';
import { adminCaller, apiToken, type As } from '../support/callers.js';
import { type UnsignedRequest } from '../support/http-client.js';
import { makeGroup, type UserGroup } from '../support/group-maker.js';
import { USER_PATH, VERIFY_PATH } from '../support/user-group-api.js';

/** State every case can point at; cases must leave it exactly as it is. */
interface Fixtures extends Catalog {
  /** A data source on schema A in Testing, and one in workspace `other`. */
  dsTesting: DataSourceRecord;
  dsOther: DataSourceRecord;
  /** g1 maps schema A to dsA; g2 maps nothing; g3 was created with the integer id 777. */
  g1: UserGroup;
  g2: UserGroup;
  g3: UserGroup;
}

interface ErrorCase {
  name: string;
  request: (f: Fixtures) => UnsignedRequest;
  /** The API token; the default workspace's Customer admin unless given. */
  as?: As;
  status: number;
  code: string;
  /** A string: error.field must equal it; null: there must be no field; absent: not checked. */
  field?: string | null;
  /** Response headers that must be present with these values. */
  headers?: Record<string, string>;
}

type Body = Record<string, unknown>;
type Operation = { label: string; request: (f: Fixtures, fields: Body) => UnsignedRequest };

const getOrCreate = (body: unknown): UnsignedRequest => ({ method: 'GET', path: USER_PATH, body });
const update = (body: unknown): UnsignedRequest => ({ method: 'PUT', path: USER_PATH, body });
const rotate = (body: unknown): UnsignedRequest => ({ method: 'POST', path: USER_PATH, body });
const remove = (body: unknown): UnsignedRequest => ({ method: 'DELETE', path: USER_PATH, body });
const verify = (body: unknown): UnsignedRequest => ({ method: 'POST', path: VERIFY_PATH, body });

/** Every operation on /api/user, each with a body that would otherwise succeed, plus `fields`. */
const CREATE: Operation = {
  label: 'GET (create)',
  request: (_f, fields) => getOrCreate({ user_group_id: 'would-be-new', ...fields }),
};
const UPDATE: Operation = {
  label: 'PUT',
  request: (f, fields) => update({ user_group_id: f.g1.provided_id, ...fields }),
};
const OPERATIONS: Operation[] = [
  CREATE,
  UPDATE,
  { label: 'POST (rotate)', request: (f, fields) => rotate({ current_token: f.g1.token, ...fields }) },
  { label: 'DELETE', request: (f, fields) => remove({ user_group_id: f.g1.provided_id, ...fields }) },
  { label: 'POST /verify', request: (f, fields) => verify({ token: f.g1.token, ...fields }) },
];
const WITH_RAW_BODY = (rawBody: string, headers?: Record<string, string>) =>
  OPERATIONS.map(({ label, request }) => ({
    label,
    request: (f: Fixtures) => ({ ...request(f, {}), body: undefined, rawBody, ...(headers ? { headers } : {}) }),
  }));

/** Cross product: each bad value of a field, sent to each operation that takes the field. */
function invalidValues(
  field: string,
  operations: Operation[],
  values: Array<[string, unknown]>,
  code = 'invalid_field',
): ErrorCase[] {
  return operations.flatMap((operation) =>
    values.map(([label, value]) => ({
      name: `${operation.label}: ${field} ${label}`,
      request: (f: Fixtures) => operation.request(f, { [field]: value }),
      status: 400,
      code,
      field,
    })),
  );
}

const CONTROL_CHARACTERS: Array<[string, unknown]> = [
  ['with NUL', 'a\u0000b'],
  ['with a newline', 'a\nb'],
  ['with a tab', 'a\tb'],
  ['with DEL', 'a\u007fb'],
  ['with a C1 control', 'a\u0085b'],
];
const BAD_TEXT: Array<[string, unknown]> = [
  ['empty', ''],
  ['of 257 characters', 'x'.repeat(257)],
  ['of 257 astral characters', '\u{1F600}'.repeat(257)],
  ['null', null],
  ['an object', { a: 1 }],
  ['an array', ['a']],
  ['a boolean', true],
  ...CONTROL_CHARACTERS,
];
const BAD_IDS: Array<[string, unknown]> = [
  ...BAD_TEXT,
  ['a fraction', 1.5],
  ['2^53, not a safe integer', 2 ** 53],
  ['-(2^53), not a safe integer', -(2 ** 53)],
];
const BAD_PROPERTIES: Array<[string, unknown]> = [
  ['an array', [{ a: 1 }]],
  ['a string', '{"a":1}'],
  ['a number', 1],
  ['a boolean', false],
  ['over 64 KiB serialized', propertiesOfSize(64 * 1024 + 1)],
  ['17 levels deep', nestedObject(17)],
  ['17 levels deep through arrays', { a: [[[[[[[[[[[[[[[[{}]]]]]]]]]]]]]]]] }],
];
const BAD_MAPPINGS: Array<[string, unknown]> = [
  ['of 65 entries', Object.fromEntries(Array.from({ length: 65 }, (_, i) => [String(i + 1), i + 1]))],
  ['with a non-integer key', { abc: 1 }],
  ['with a fractional key', { '1.5': 1 }],
  ['with a negative key', { '-1': 1 }],
  ['with a zero-padded key', { '01': 1 }],
  ['with a boolean value', { 1: true }],
  ['with a fractional value', { 1: 1.5 }],
  ['with a zero value', { 1: 0 }],
  ['with a null value', { 1: null }],
  ['with an object value', { 1: { id: 1 } }],
  ['with an empty string value', { 1: '' }],
  ['as an array', [1]],
  ['as a string', '{"1":1}'],
];
const BAD_TOKENS: Array<[string, unknown]> = [
  ['of 257 characters', `ugt_${'a'.repeat(253)}`],
  ['a number', 42],
  ['null', null],
];

const RAW_BAD_JSON: Array<[string, string]> = [
  ['truncated JSON', '{"user_group_id":'],
  ['a JSON array', '[]'],
  ['a JSON string', '"g1"'],
  ['JSON null', 'null'],
  ['a JSON number', '1'],
  ['trailing garbage', '{} x'],
  ['single quotes', "{'user_group_id':'a'}"],
];

const NOT_JSON_MEDIA_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=latin1',
  'application/json; charset=iso-8859-1',
  'application/xml',
  'application/json-patch+json',
];

const KIB = 1024;
const MIB = 1024 * KIB;

/** A JSON body that is exactly valid in shape, for the media-type and size cases. */
const VALID_BODY = JSON.stringify({ user_group_id: 'would-be-new' });

const CASES: ErrorCase[] = [
  // invalid_json: the body is not a JSON object.
  ...RAW_BAD_JSON.flatMap(([label, raw]) =>
    WITH_RAW_BODY(raw).map((op) => ({
      name: `${op.label}: ${label}`,
      request: op.request,
      status: 400,
      code: 'invalid_json',
      field: null,
    })),
  ),
  ...WITH_RAW_BODY('')
    .filter((op) => op.label !== CREATE.label)
    .map((op) => ({
      name: `${op.label}: an empty body`,
      request: op.request,
      status: 400,
      code: 'invalid_json',
      field: null,
    })),
  {
    name: 'GET query string: properties not JSON',
    request: () => ({ method: 'GET', path: `${USER_PATH}?user_group_id=q&properties=%7Bnope` }),
    status: 400,
    code: 'invalid_json',
    field: 'properties',
  },
  // One source of fields per request (docs/api.md#error-codes, `invalid_request`).
  {
    name: 'GET with both a JSON body and a query string',
    request: () => ({ ...getOrCreate({ user_group_id: 'from_body' }), path: `${USER_PATH}?user_group_id=from_query` }),
    status: 400,
    code: 'invalid_request',
    field: null,
  },

  // missing_field
  ...[
    ['GET without user_group_id', getOrCreate({ name: 'n' }), 'user_group_id'],
    ['GET with an empty object', getOrCreate({}), 'user_group_id'],
    ['GET without a body or a query string', { method: 'GET', path: USER_PATH }, 'user_group_id'],
    ['PUT without user_group_id', update({ name: 'n', new_user_group_id: 'x' }), 'user_group_id'],
    ['POST without current_token', rotate({}), 'current_token'],
    ['POST /verify without token', verify({}), 'token'],
  ].map(([name, request, field]) => ({
    name: name as string,
    request: () => request as UnsignedRequest,
    status: 400,
    code: 'missing_field',
    field: field as string,
  })),
  {
    name: 'DELETE with neither current_token nor user_group_id',
    request: () => remove({}),
    status: 400,
    code: 'missing_field',
  },
  {
    name: 'DELETE with only data_source_provided_id',
    request: (f) => remove({ data_source_provided_id: f.dsA.providedId }),
    status: 400,
    code: 'missing_field',
  },

  // unknown_field: typos never pass silently.
  ...OPERATIONS.map((operation) => ({
    name: `${operation.label}: a misspelt field`,
    request: (f: Fixtures) => operation.request(f, { nmae: 'typo' }),
    status: 400,
    code: 'unknown_field',
    field: 'nmae',
  })),
  {
    name: 'PUT: propertes',
    request: (f) => update({ user_group_id: f.g1.provided_id, propertes: {} }),
    status: 400,
    code: 'unknown_field',
    field: 'propertes',
  },
  {
    name: 'DELETE: current_tokn',
    request: (f) => remove({ user_group_id: f.g1.provided_id, current_tokn: f.g1.token }),
    status: 400,
    code: 'unknown_field',
    field: 'current_tokn',
  },
  {
    name: 'GET query string: a misspelt field',
    request: () => ({ method: 'GET', path: `${USER_PATH}?user_group_id=q&nmae=x` }),
    status: 400,
    code: 'unknown_field',
    field: 'nmae',
  },

  // invalid_field, naming the field.
  ...invalidValues('user_group_id', [CREATE, { label: 'DELETE', request: (_f, fields) => remove(fields) }], BAD_IDS),
  ...invalidValues(
    'user_group_id',
    [{ label: 'PUT', request: (_f, fields) => update({ name: 'n', ...fields }) }],
    BAD_IDS,
  ),
  ...invalidValues('new_user_group_id', [UPDATE], BAD_IDS),
  ...invalidValues('name', [CREATE, UPDATE], [...BAD_TEXT, ['a number', 5]]),
  ...invalidValues('properties', [CREATE, UPDATE], BAD_PROPERTIES),
  ...invalidValues('mapping', [CREATE, UPDATE], BAD_MAPPINGS),
  // On PUT null clears the mapping (docs/api.md#endpoints); a create has no mapping to clear.
  ...invalidValues('mapping', [CREATE], [['as null', null]]),
  ...invalidValues(
    'current_token',
    [
      { label: 'POST (rotate)', request: (_f, fields) => rotate(fields) },
      { label: 'DELETE', request: (_f, fields) => remove(fields) },
    ],
    BAD_TOKENS,
  ),
  // verify takes embed tokens too, so its token may be as long as one (8 KiB).
  ...invalidValues(
    'token',
    [{ label: 'POST /verify', request: (_f, fields) => verify(fields) }],
    [
      ['of 8 193 characters', `ugt_${'a'.repeat(8189)}`],
      ['with a NUL', `ugt_${'a'.repeat(63)}\u0000`],
      ...BAD_TOKENS.slice(1),
    ],
  ),
  ...invalidValues(
    'data_source_provided_id',
    [{ label: 'DELETE', request: (f, fields) => remove({ user_group_id: f.g1.provided_id, ...fields }) }],
    [
      ['empty', ''],
      ['of 257 characters', 'x'.repeat(257)],
      ['a number', 1],
    ],
  ),
  {
    name: 'GET query string: user_group_id twice',
    request: () => ({ method: 'GET', path: `${USER_PATH}?user_group_id=a&user_group_id=b` }),
    status: 400,
    code: 'invalid_field',
    field: 'user_group_id',
  },

  // The mapping names things that do not exist in this tenant, or do not fit together.
  ...mappingCases('unknown_schema', [['an unknown schema id', (f) => ({ 999999: f.dsA.id })]]),
  ...mappingCases('unknown_data_source', [
    ['an unknown data source id', (f) => ({ [f.schemaA]: 999999 })],
    ['an unknown data source digit string', (f) => ({ [f.schemaA]: '999999' })],
    ['an unknown provided_id', (f) => ({ [f.schemaA]: 'no-such-data-source' })],
    ["the Testing environment's data source id", (f) => ({ [f.schemaA]: f.dsTesting.id })],
    ["the Testing environment's provided_id", (f) => ({ [f.schemaA]: f.dsTesting.providedId })],
    ["another workspace's data source id", (f) => ({ [f.schemaA]: f.dsOther.id })],
  ]),
  ...mappingCases('data_source_schema_mismatch', [
    ['a data source of another schema, by id', (f) => ({ [f.schemaA]: f.dsB.id })],
    ['a data source of another schema, by provided_id', (f) => ({ [f.schemaA]: f.dsB.providedId })],
  ]),

  // 404 user_group_not_found: nothing by that id or token in the token's environment.
  ...notFound([
    ['PUT of an unknown id', () => update({ user_group_id: 'no-such-group', name: 'n' })],
    [
      'PUT of a Customer group with a Testing token',
      (f) => update({ user_group_id: f.g1.provided_id, name: 'n' }),
      { environment: 'Testing' },
    ],
    [
      "PUT of a group with another workspace's token",
      (f) => update({ user_group_id: f.g1.provided_id, name: 'n' }),
      { workspace: 'other' },
    ],
    ['POST of an unknown well-formed token', () => rotate({ current_token: `ugt_${'0'.repeat(64)}` })],
    ['POST of a malformed token', () => rotate({ current_token: 'not-a-token' })],
    [
      'POST of a Customer token with a Testing API token',
      (f) => rotate({ current_token: f.g1.token }),
      { environment: 'Testing' },
    ],
    ['verify of an unknown token', () => verify({ token: `ugt_${'0'.repeat(64)}` })],
    ['verify of an empty token', () => verify({ token: '' })],
    [
      'verify of a Customer token with a Testing API token',
      (f) => verify({ token: f.g1.token }),
      { environment: 'Testing', scope: 'read' },
    ],
    ["verify with another workspace's API token", (f) => verify({ token: f.g1.token }), { workspace: 'other' }],
    ['DELETE of an unknown id', () => remove({ user_group_id: 'no-such-group' })],
    ['DELETE of an unknown token', () => remove({ current_token: `ugt_${'0'.repeat(64)}` })],
    [
      'DELETE of an unknown token with a known id',
      (f) => remove({ current_token: `ugt_${'0'.repeat(64)}`, user_group_id: f.g1.provided_id }),
    ],
    [
      'DELETE of a Customer group with a Testing token',
      (f) => remove({ user_group_id: f.g1.provided_id }),
      { environment: 'Testing' },
    ],
  ]),

  // 404 not_found: unknown paths answer with the JSON envelope.
  ...['/api/nope', '/api/users', '/api/user/verify/extra', '/api/admin', '/nope', '/'].map((path) => ({
    name: `GET ${path}`,
    request: () => ({ method: 'GET', path }),
    status: 404,
    code: 'not_found',
    field: null,
  })),

  // 405 with Allow.
  ...[
    ['PATCH', USER_PATH, 'DELETE, GET, POST, PUT'],
    ['OPTIONS', USER_PATH, 'DELETE, GET, POST, PUT'],
    ['PUT', VERIFY_PATH, 'POST'],
    ['GET', VERIFY_PATH, 'POST'],
    ['DELETE', VERIFY_PATH, 'POST'],
    ['DELETE', '/api/admin/schemas', 'GET, POST'],
    ['PATCH', '/api/admin/schemas', 'GET, POST'],
  ].map(([method, path, allow]) => ({
    name: `${method} ${path}`,
    request: () => ({ method, path, body: {} }) as UnsignedRequest,
    status: 405,
    code: 'method_not_allowed',
    field: null,
    headers: { allow: allow as string },
  })),

  // 409
  {
    name: 'PUT renaming onto an existing id',
    request: (f) => update({ user_group_id: f.g1.provided_id, new_user_group_id: f.g2.provided_id }),
    status: 409,
    code: 'user_group_id_taken',
    field: 'new_user_group_id',
  },
  {
    name: 'PUT renaming onto an existing id given as an integer',
    request: (f) => update({ user_group_id: f.g1.provided_id, new_user_group_id: 777, name: 'would change too' }),
    status: 409,
    code: 'user_group_id_taken',
    field: 'new_user_group_id',
  },
  {
    name: 'DELETE with the token of one group and the id of another',
    request: (f) => remove({ current_token: f.g1.token, user_group_id: f.g2.provided_id }),
    status: 409,
    code: 'user_group_mismatch',
  },
  ...[
    ['a data source the group does not map', (f: Fixtures) => f.dsB.providedId],
    ['a data source that does not exist', () => 'no-such-data-source'],
    ["another environment's data source of the mapped provided_id", (f: Fixtures) => f.dsTesting.providedId],
  ].flatMap(([label, dataSource]) =>
    (['user_group_id', 'current_token'] as const).map((by) => ({
      name: `DELETE by ${by} with ${label as string}`,
      request: (f: Fixtures) =>
        remove({
          [by]: by === 'user_group_id' ? f.g1.provided_id : f.g1.token,
          data_source_provided_id: (dataSource as (f: Fixtures) => string)(f),
        }),
      status: 409,
      code: 'data_source_mismatch',
      field: 'data_source_provided_id',
    })),
  ),
  {
    name: 'DELETE of an unmapped group with data_source_provided_id',
    request: (f) => remove({ user_group_id: f.g2.provided_id, data_source_provided_id: f.dsA.providedId }),
    status: 409,
    code: 'data_source_mismatch',
    field: 'data_source_provided_id',
  },

  // 413: over 1 MiB, whatever the operation.
  ...WITH_RAW_BODY(bodyOfSize(MIB + 1)).map((op) => ({
    name: `${op.label}: a body of 1 MiB + 1 byte`,
    request: op.request,
    status: 413,
    code: 'payload_too_large',
    field: null,
  })),
  {
    name: 'GET with a body of exactly 1 MiB is read (and then rejected for its name)',
    request: () => ({ method: 'GET', path: USER_PATH, rawBody: bodyOfSize(MIB) }),
    status: 400,
    code: 'invalid_field',
    field: 'name',
  },

  // 415: a body that is not JSON.
  ...NOT_JSON_MEDIA_TYPES.flatMap((contentType) =>
    WITH_RAW_BODY(VALID_BODY, { 'content-type': contentType }).map((op) => ({
      name: `${op.label}: a body sent as ${contentType}`,
      request: op.request,
      status: 415,
      code: 'unsupported_media_type',
      field: null,
    })),
  ),
];

function mappingCases(code: string, mappings: Array<[string, (f: Fixtures) => Record<string, unknown>]>): ErrorCase[] {
  return [CREATE, UPDATE].flatMap((operation) =>
    mappings.map(([label, mapping]) => ({
      name: `${operation.label}: mapping to ${label}`,
      request: (f: Fixtures) => operation.request(f, { mapping: mapping(f) }),
      status: 400,
      code,
      field: 'mapping',
    })),
  );
}

function notFound(cases: Array<[string, (f: Fixtures) => UnsignedRequest, As?]>): ErrorCase[] {
  return cases.map(([name, request, as]) => ({
    name,
    request,
    ...(as ? { as } : {}),
    status: 404,
    code: 'user_group_not_found',
    field: null,
  }));
}

/** Values at the limits that must be accepted, so that the rejections above are about the limit. */
const ACCEPTED_AT_THE_LIMIT: Array<[string, Record<string, unknown>]> = [
  ['a user_group_id of 256 characters', { user_group_id: 'i'.repeat(256) }],
  ['a user_group_id of 256 astral characters', { user_group_id: '\u{1F600}'.repeat(256) }],
  ['a name of 256 characters', { name: 'n'.repeat(256) }],
  ['properties of exactly 64 KiB', { properties: propertiesOfSize(64 * KIB) }],
  ['properties 16 levels deep', { properties: nestedObject(16) }],
  ['user_group_id the largest safe integer', { user_group_id: Number.MAX_SAFE_INTEGER - 1 }],
];

describe.each(TRANSPORTS)('user group errors over $name', (transport) => {
  const ctx = useClient(transport);
  let fixtures: Fixtures;

  beforeAll(async () => {
    const { t } = ctx;
    const catalog = await seedCatalog(t);
    const dsTesting = await seedDataSource(t, catalog.schemaA, { environment: 'Testing' });
    const dsOther = await seedDataSource(t, await seedSchema(t, 'other'), { workspace: 'other' });
    fixtures = {
      ...catalog,
      dsTesting,
      dsOther,
      g1: await makeGroup(t, { mapping: { [catalog.schemaA]: catalog.dsA.id } }),
      g2: await makeGroup(t),
      g3: await makeGroup(t, { id: '777' }),
    };
  });

  it.each(CASES)('$name → $status $code', async ({ request, as, status, code, field, headers }) => {
    const req = { ...request(fixtures), token: apiToken(ctx.t, as) };
    const res = await expectUnchanged(ctx.t, () => ctx.client(req));
    expectError(res, status, code, field);
    for (const [name, value] of Object.entries(headers ?? {})) {
      expect(String(res.headers[name]).split(', ').sort().join(', ')).toBe(value);
    }
  });

  // A trailing slash is not the routed path; whatever the answer, a 405 must not refuse a method its Allow lists.
  it.each([
    ...['GET', 'PUT', 'POST', 'DELETE'].map((method) => [method, `${USER_PATH}/`]),
    ['POST', `${VERIFY_PATH}/`],
    ['GET', '/api/admin/schemas/'],
  ])('%s %s is not a 405 listing its own method', async (method, path) => {
    const res = await ctx.client({ method, path, token: apiToken(ctx.t), body: {} });
    expect({
      status: res.status,
      allow: String(res.headers.allow ?? '')
        .split(', ')
        .includes(method),
    }).not.toEqual({ status: 405, allow: true });
  });

  it.each(ACCEPTED_AT_THE_LIMIT)('accepts %s', async (_label, fields) => {
    const res = await ctx.client({
      method: 'GET',
      path: USER_PATH,
      token: apiToken(ctx.t),
      body: { user_group_id: uniqueId('limit'), ...fields },
    });
    expect(expectSuccess(res).new_user_group).toBe(true);
  });

  it('accepts a mapping of 64 entries', async () => {
    const mapping: Record<string, number> = {};
    for (let i = 0; i < 64; i += 1) {
      const schemaId = await seedSchema(ctx.t);
      mapping[schemaId] = (await seedDataSource(ctx.t, schemaId)).id;
    }
    const res = await ctx.client({
      method: 'GET',
      path: USER_PATH,
      token: apiToken(ctx.t),
      body: { user_group_id: uniqueId('wide'), mapping },
    });
    expect(Object.keys(expectSuccess(res).user_group.mapping)).toHaveLength(64);
  });

  it('the snapshot behind "nothing changed" does see a change', async () => {
    const before = await snapshotDatabase(ctx.t);
    expectSuccess(
      await ctx.client({
        method: 'PUT',
        path: USER_PATH,
        token: apiToken(ctx.t),
        body: { user_group_id: fixtures.g2.provided_id, name: 'Seen' },
      }),
    );
    expect(await snapshotDatabase(ctx.t)).not.toEqual(before);
  });

  it('the snapshot sees a team_id used up even when no row is left to show it', async () => {
    /** The team_id counter: SQLite's sqlite_sequence row, or PostgreSQL's identity sequence. */
    const teamIdCounter = (snapshot: Record<string, unknown[]>) =>
      ([...(snapshot.sqlite_sequence ?? []), ...(snapshot.pg_sequences ?? [])] as Array<Record<string, unknown>>).find(
        (row) => row.name === 'user_groups' || row.sequencename === 'user_groups_team_id_seq',
      );
    const before = await snapshotDatabase(ctx.t);
    const group = await makeGroup(ctx.t);
    await ctx.t.runtime.services.userGroups.deleteUserGroup(await adminCaller(ctx.t), {
      userGroupId: group.provided_id,
    });
    const after = await snapshotDatabase(ctx.t);
    expect(after.user_groups).toEqual(before.user_groups);
    expect(teamIdCounter(after)).toBeDefined();
    expect(teamIdCounter(after)).not.toEqual(teamIdCounter(before));
  });
});
