/*
 * The numbers, names and field concepts of the contract (docs/api.md) that the wire schemas state and the
 * domain enforces, defined once. A leaf: it imports nothing, so the schemas that use it can be built into
 * @ugs/client without any of the server (packages/client; eslint.config.js keeps it so).
 */

/*
 * The field concepts that several schemas and the domain take, each defined here once and found by its
 * name: text without control characters and a tag. A schema states them with TypeBox
 * (common.schemas.ts: `Tag`), the domain checks what arrives without a schema (a CLI option) with the
 * predicates below, and both read the same definition.
 */

/**
 * Text without control characters: no C0 control (U+0000–U+001F), no DEL, no C1 control
 * (U+0080–U+009F). A pattern, so that a schema states it; Ajv and TypeBox both compile it.
 */
export const NO_CONTROL_CHARACTERS = '^[^\\x00-\\x1F\\x7F-\\x9F]*$';
const WITHOUT_CONTROL_CHARACTERS = new RegExp(NO_CONTROL_CHARACTERS);

/** A tag (docs/api.md#hierarchy-demo-groups-and-tags): 1 to 64 characters without control characters. */
export const TAG = { minLength: 1, maxLength: 64, pattern: NO_CONTROL_CHARACTERS } as const;

/** Whether `text` is a tag, as the `Tag` schema decides (its lengths count code points, as JSON Schema's do). */
export function isTag(text: string): boolean {
  if (!WITHOUT_CONTROL_CHARACTERS.test(text)) return false;
  // Counting the code points of a bounded prefix: a long text is no tag whatever follows.
  const length = [...text.slice(0, 2 * TAG.maxLength + 2)].length;
  return length >= TAG.minLength && length <= TAG.maxLength;
}

/** The most rows one page may ask for, on every list (API and CLI). */
export const MAX_PAGE_SIZE = 1000;

export const MAX_PROPERTIES_BYTES = 64 * 1024;
export const MAX_PROPERTIES_DEPTH = 16;

export const MIN_EMBED_TOKEN_LIFETIME_S = 60;
export const DEFAULT_EMBED_TOKEN_LIFETIME_S = 3600;
/** The longest lifetime an embed token may have (docs/api.md#embed-tokens): a retired key stays published this long. */
export const MAX_EMBED_TOKEN_LIFETIME_S = 86_400;
/**
 * The most keys one issuer publishes. It bounds the JWKS every verifier fetches (and the rotations a
 * leaked admin token can pile up) while leaving room for many rotations a day.
 */
export const MAX_PUBLISHED_KEYS = 32;
export const MAX_EMBED_TOKEN_BYTES = 8 * 1024;
/** The longest session of refreshable embed tokens (docs/api.md#refresh-within-a-session), and the shortest inactivity interval. */
export const MAX_EMBED_SESSION_S = 86_400;
export const MIN_EMBED_INACTIVITY_S = 60;

/** The range of a token's own rate limit: from one request in about 17 minutes to a million a second. */
export const RATE_LIMIT_BOUNDS = {
  perSecond: { minimum: 0.001, maximum: 1_000_000 },
  burst: { minimum: 1, maximum: 1_000_000 },
} as const;

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** The changes a webhook can announce (docs/api.md#webhooks); each is also the audit action of the change. */
export const WEBHOOK_EVENT_TYPES = [
  'user_group.created',
  'user_group.updated',
  'user_group.token_rotated',
  'user_group.deleted',
  'embed_token.revoked',
  'api_token.created',
  'api_token.revoked',
  'signing_key.rotated',
] as const;

/**
 * The largest schema or data-source id: ids are numbers of their workspace from 1 to 2^31 − 1, so
 * that they fit a 32-bit signed integer in every client language (the hosted product's are far
 * smaller). A chosen id outside it is refused by the request schema; an automatic one past it is
 * `ids_exhausted`.
 */
export const MAX_CATALOGUE_ID = 2_147_483_647;

/** The most user groups one sync takes (docs/api.md#sync-tenants-as-code): all or nothing up to this many. */
export const MAX_SYNC_GROUPS = 10_000;
/** The most bytes one group of a sync may take (an NDJSON line, an array element): a single group's request body limit. */
export const MAX_SYNC_LINE_BYTES = 1024 * 1024;
/** The operators of an access rule (docs/api.md#access-rules). */
export const ACCESS_RULE_OPERATORS = [
  'eq',
  'neq',
  'in',
  'not_in',
  'lt',
  'lte',
  'gt',
  'gte',
  'is_null',
  'not_null',
] as const;
/** The operators that take a list of values, and those that take no value at all (every other takes one scalar). */
export const ACCESS_RULE_LIST_OPERATORS = ['in', 'not_in'] as const;
export const ACCESS_RULE_NULL_TEST_OPERATORS = ['is_null', 'not_null'] as const;
/** The fields of an access rule, in the order a message lists them (AccessRule in access-rules.schemas.ts states them). */
export const ACCESS_RULE_FIELDS = ['schema_id', 'table', 'column', 'op', 'value'] as const;
export type AccessRuleField = (typeof ACCESS_RULE_FIELDS)[number];
/** An access rule's column, and each part of its table (docs/api.md#access-rules): PostgreSQL's 63 characters at most. */
export const ACCESS_RULE_IDENTIFIER = '^[A-Za-z_][A-Za-z0-9_]{0,62}$';
/** An access rule's table: an identifier, optionally qualified once as `schema.table`. */
export const ACCESS_RULE_TABLE = '^[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?$';
/** The most values an `in`/`not_in` rule lists. */
export const MAX_ACCESS_RULE_VALUES = 1000;
/** The most access rules a group may own, and the most it may have with its ancestors' (docs/api.md#access-rules). */
export const MAX_ACCESS_RULES = 64;
export const MAX_COMPUTED_ACCESS_RULES = 128;

/**
 * How long a published embed-token revocation document may be cached (its `Cache-Control: max-age` and
 * `max_age`), and the client verifier's default staleness bound: a revocation reaches a verifier that
 * keeps to it within this many seconds of its commit.
 */
export const EMBED_REVOCATION_MAX_AGE_S = 60;

/**
 * The fields of a group that this service keeps and an export may lack (`--require-fields`,
 * `require_fields`): the hosted product's own API document lists only `team_id`, `token`, `name`,
 * `provided_id` and `properties`.
 */
export const CARRIED_FIELDS = ['name', 'properties', 'mapping', 'parent_user_group_id', 'is_demo_group'] as const;

/** The lacking lines an import's summary lists one by one (CLI and API); its counts cover every line. */
export const LACKING_LISTED = 1000;
