import type { TSchema } from 'typebox';
import { responses } from '../wire/envelope.js';

interface RouteParts {
  description?: string;
  body?: TSchema;
  querystring?: TSchema;
  params?: TSchema;
}

/**
 * The schema of an authenticated /api route: what validates the request, serialises the response
 * (success or the error envelope) and documents it in /openapi.json.
 */
export function apiRouteSchema<S extends TSchema, P extends RouteParts>(
  tag: string,
  summary: string,
  success: S,
  parts: P,
) {
  return { summary, tags: [tag], security: [{ apiToken: [] }], ...parts, response: responses(success) };
}
