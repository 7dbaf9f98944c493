import { isDeepStrictEqual } from 'node:util';
import { MAX_PAGE_SIZE, WEBHOOK_EVENT_TYPES } from '../wire/contract.constants.js';
import { IdParam, MAX_SAFE } from '../wire/common.schemas.js';
import { DEFAULT_PAGE_SIZE, PageQuery } from '../wire/page.schemas.js';
import { TopUsageQuery } from '../wire/usage.schemas.js';
import { DEFAULT_TOP_LIMIT, MAX_TOP_LIMIT } from '../domain/usage/usage.rules.js';

/*
 * What @fastify/swagger derives from the route schemas is what the validator runs; a code generator
 * wants the values those schemas stand for. These transforms change the published document only:
 * the routes validate exactly as before (docs/api.md#the-openapi-document).
 */

export type Schema = {
  type?: string;
  title?: string;
  enum?: unknown[];
  anyOf?: Schema[];
  items?: Schema;
  pattern?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
  [keyword: string]: unknown;
};
export type Parameter = {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
  content?: Record<string, { schema?: Schema }>;
};
export type Operation = {
  description?: string;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  parameters?: Parameter[];
};
export type OpenApiDocument = {
  paths?: Record<string, Record<string, Operation>>;
  webhooks?: Record<string, unknown>;
  components?: { schemas?: Record<string, Schema> };
};

// The wire's own patterns, read off its schemas: a query or path value matching one of them is text
// standing for a number, published as that number with the bounds the server enforces.
const patternOf = (schema: object) => ('pattern' in schema ? schema.pattern : undefined);
const ID_TEXT = patternOf(IdParam(''));
const PAGE_SIZE_TEXT = patternOf(PageQuery.limit);
const TOP_LIMIT_TEXT = patternOf(TopUsageQuery.properties.limit);
const TEXT_STANDING_FOR: Array<[pattern: unknown, published: Schema]> = [
  [ID_TEXT, { type: 'integer', minimum: 1, maximum: MAX_SAFE }],
  // The pattern admits up to 9999; the route refuses more than MAX_PAGE_SIZE (page_too_large).
  [PAGE_SIZE_TEXT, { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE }],
  // GET /api/admin/usage/top's: the pattern admits 0 to 9999; the domain refuses outside 1 to MAX_TOP_LIMIT.
  [TOP_LIMIT_TEXT, { type: 'integer', minimum: 1, maximum: MAX_TOP_LIMIT, default: DEFAULT_TOP_LIMIT }],
];

const EVENT_TYPE: Schema = { title: 'WebhookEventType', type: 'string', enum: [...WEBHOOK_EVENT_TYPES] };
const isEventFilterEnum = (schema: Schema) =>
  isDeepStrictEqual(new Set(schema.enum), new Set([...WEBHOOK_EVENT_TYPES, '*']));

/**
 * A literal as @fastify/swagger leaves it in some places (`const`) in the form it gives it in others
 * (a one-value `enum`), so that a named schema reads the same wherever it appears.
 */
function enumOfConst(schema: Schema): Schema {
  if (!('const' in schema)) return schema;
  const { const: value, ...rest } = schema;
  return { ...rest, enum: [value] };
}

/** A literal number that is whole (TypeBox types `success: 1` a number) is published as the integer it is. */
function integerOfWholeEnum(schema: Schema): Schema {
  if (schema.type !== 'number' || !schema.enum?.every(Number.isSafeInteger)) return schema;
  return { ...schema, type: 'integer' };
}

/** `anyOf` of one-value enums of one type (TypeBox's union of literals) as the one enum it means. */
function flattenLiteralUnion(schema: Schema): Schema {
  const members = schema.anyOf;
  if (!members?.length) return schema;
  const type = members[0]!.type;
  const literal = (member: Schema) =>
    member.type === type && member.enum?.length === 1 && Object.keys(member).length === 2;
  if (!members.every(literal)) return schema;
  const { anyOf: _members, ...rest } = schema;
  return { ...rest, type, enum: members.map((member) => member.enum![0]) };
}

/**
 * A webhook event filter is an event type or "*" (all of them), and "*" goes alone (the domain
 * refuses it beside another): a list of filters is published as a list of event types, or exactly ["*"].
 */
function publishEventFilterLists(schema: Schema): Schema {
  if (schema.type !== 'array' || !schema.items || !isEventFilterEnum(schema.items)) return schema;
  const { type: _type, items: _items, minItems: _min, maxItems: _max, description, ...rest } = schema;
  return {
    ...rest,
    ...(description === undefined ? {} : { description }),
    oneOf: [
      { type: 'array', items: EVENT_TYPE, minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length, uniqueItems: true },
      { type: 'array', items: { type: 'string', enum: ['*'] }, minItems: 1, maxItems: 1 },
    ],
  };
}

/** Applies `visit` to every schema below `node`, innermost first. */
function mapSchemas(node: unknown, visit: (schema: Schema) => Schema): unknown {
  if (Array.isArray(node)) return node.map((item) => mapSchemas(item, visit));
  if (node === null || typeof node !== 'object') return node;
  const mapped = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, mapSchemas(value, visit)]));
  return ['type', 'anyOf', 'oneOf', 'enum', 'const'].some((keyword) => keyword in mapped)
    ? visit(mapped as Schema)
    : mapped;
}

/** A query or path value as the value it stands for (they all travel as text). */
function publishParameterText(parameter: Parameter): Parameter {
  if (!parameter.schema || !['query', 'path'].includes(parameter.in)) return parameter;
  const { schema } = parameter;
  const standsFor = TEXT_STANDING_FOR.find(([pattern]) => schema.type === 'string' && schema.pattern === pattern);
  if (standsFor) return { ...parameter, schema: standsFor[1] };
  if (schema.type === 'string' && isDeepStrictEqual(schema.enum, ['true', 'false'])) {
    const { enum: _values, ...rest } = schema;
    return { ...parameter, schema: { ...rest, type: 'boolean' } };
  }
  return parameter;
}

/** An event filter left outside a list is the type of one event (the payload's): never "*". */
const publishEventType = (schema: Schema) => (isEventFilterEnum(schema) ? EVENT_TYPE : schema);

export function publishTypes(document: OpenApiDocument): void {
  // Two passes: a list of filters must be seen whole before its items are taken for single events.
  for (const publish of [
    (schema: Schema) => publishEventFilterLists(flattenLiteralUnion(integerOfWholeEnum(enumOfConst(schema)))),
    publishEventType,
  ]) {
    document.paths = mapSchemas(document.paths, publish) as OpenApiDocument['paths'];
    document.webhooks = mapSchemas(document.webhooks, publish) as OpenApiDocument['webhooks'];
  }
  for (const operations of Object.values(document.paths ?? {}))
    for (const operation of Object.values(operations))
      if (operation.parameters) operation.parameters = operation.parameters.map(publishParameterText);
}

/**
 * Every schema the wire names (its `title`) becomes one entry of components.schemas, referenced
 * wherever it appears, so that a generator makes one type of it (`UserGroup`, `Error`, …). One name
 * standing for two different schemas is a mistake in the wire: the document refuses to build.
 */
export function hoistNamedSchemas(document: OpenApiDocument): void {
  const components: Record<string, Schema> = { ...document.components?.schemas };
  const hoist = (schema: Schema): Schema => {
    if (typeof schema.title !== 'string') return schema;
    const name = schema.title;
    const known = components[name];
    if (known && !isDeepStrictEqual(known, schema))
      throw new Error(
        `OpenAPI: two different schemas are both titled ${name}: ${JSON.stringify(known)} ${JSON.stringify(schema)}`,
      );
    components[name] = schema;
    return { $ref: `#/components/schemas/${name}` };
  };
  document.paths = mapSchemas(document.paths, hoist) as OpenApiDocument['paths'];
  document.webhooks = mapSchemas(document.webhooks, hoist) as OpenApiDocument['webhooks'];
  document.components = {
    ...document.components,
    schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
  };
}
