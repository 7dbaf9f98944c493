import { requestFailure } from './request-errors.js';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import { echoable } from '../domain/echoed-text.rules.js';
import type { AppError } from '../domain/errors.js';

type ObjectSchema = { properties?: Record<string, { description?: string }> } | undefined;

// Limits whose own wording is already exact; for the rest (type, pattern, anyOf...) the field's
// documented rule is clearer than the validator's words.
const SELF_EXPLAINING = new Set(['maxLength', 'minLength', 'maxProperties', 'minimum', 'maximum']);

/** Maps the first schema violation (of the body, query string or path) to missing_field, unknown_field or invalid_field, naming the field. */
export function validationError(errors: FastifySchemaValidationError[], context: string, schema: unknown): AppError {
  const first = errors[0];
  if (!first) return requestFailure.invalidRequest();
  const params = first.params as Record<string, unknown>;
  // Field names come from the caller: what is echoed of them is cut (docs/api.md#wire-conventions).
  const path = first.instancePath
    .split('/')
    .slice(1)
    .map((segment) => echoable(segment.replace(/~1/g, '/').replace(/~0/g, '~')));
  const field = path[0];

  if (field === undefined) {
    if (first.keyword === 'required') {
      const missing = echoable(String(params.missingProperty));
      return requestFailure.missingField(missing);
    }
    if (first.keyword === 'additionalProperties') {
      const unknown = echoable(String(params.additionalProperty));
      return requestFailure.unknownField(unknown);
    }
    if (context === 'body') return requestFailure.bodyNotObject();
    return requestFailure.invalidPart(context);
  }

  const rule = (schema as ObjectSchema)?.properties?.[field]?.description;
  const message =
    SELF_EXPLAINING.has(first.keyword) || !rule
      ? `"${path.join('.')}" ${first.message ?? 'is invalid'}.`
      : `"${field}" is invalid: ${lowerFirst(rule)}`;
  return requestFailure.invalidField(field, message);
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
