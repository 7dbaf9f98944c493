import { MAX_CATALOGUE_ID, NO_CONTROL_CHARACTERS, TAG } from './contract.constants.js';
import { Type } from 'typebox';

// Defined in the leaf of contract constants, which the domain reads too; re-exported for the schemas.
export { NO_CONTROL_CHARACTERS };
export const MAX_SAFE = Number.MAX_SAFE_INTEGER;

export const EnvironmentTag = Type.Union([Type.Literal('Customer'), Type.Literal('Testing')]);

/** `?environment=`: which environment an admin call acts in (default: the API token's); nothing else. */
export const EnvironmentQuery = Type.Object(
  { environment: Type.Optional(EnvironmentTag) },
  { additionalProperties: false },
);

/** A tag (contract.constants.ts: TAG), wherever one is taken: a group's tags, a sync's prune, the admin list's filter. */
export const Tag = (description?: string) =>
  Type.String(description === undefined ? { ...TAG } : { ...TAG, description });

export const Text256 = (description: string) =>
  Type.String({ minLength: 1, maxLength: 256, pattern: NO_CONTROL_CHARACTERS, description });

/** A schema or data-source id an admin chooses at creation (docs/api.md#schema-and-data-source-ids). */
export const ChosenCatalogueId = (what: string) =>
  Type.Integer({
    minimum: 1,
    maximum: MAX_CATALOGUE_ID,
    description: `The ${what}'s id in the workspace, from 1 to ${MAX_CATALOGUE_ID} (to keep the ids of an existing catalogue); taken: 409 id_taken. Default: the workspace's next, above every id it has issued.`,
  });

export const Id = (description: string) => Type.Integer({ minimum: 1, maximum: MAX_SAFE, description });

/*
 * Integers the service writes, with the bounds they keep (the OpenAPI document publishes every integer
 * with its bounds): a row's id, a schema's or data source's id, a count.
 */
export const IssuedId = Type.Integer({ minimum: 1, maximum: MAX_SAFE });
export const CatalogueId = Type.Integer({ minimum: 1, maximum: MAX_CATALOGUE_ID });
export const Count = Type.Integer({ minimum: 0, maximum: MAX_SAFE });

export const Timestamp = Type.String({ format: 'date-time' });

/**
 * A timestamp a caller sends: RFC 3339's grammar exactly (a `T` between date and time, an offset),
 * without the leap second JavaScript cannot represent; `date-time` adds the calendar check.
 */
export const TimestampInput = (description: string) =>
  Type.String({
    format: 'date-time',
    pattern:
      '^\\d{4}-\\d{2}-\\d{2}[Tt]([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d+)?([Zz]|[+-]([01]\\d|2[0-3]):[0-5]\\d)$',
    description: `${description}: an RFC 3339 timestamp such as 2026-11-24T10:00:00Z (no leap second).`,
  });

/** For routes that take no query parameters: a stray one is an error, not silently ignored. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/** An id in a path, as text: digits only, within the safe integer range. */
export const IdParam = (description: string) => Type.String({ pattern: '^[1-9][0-9]{0,15}$', description });
