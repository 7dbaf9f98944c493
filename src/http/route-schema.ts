import type { TSchema } from 'typebox';
import { responses } from '../wire/envelope.js';

/**
 * An /api operation takes an API token (the scheme: openapi.ts). Its description names every header
 * auth.ts reads; each is not a scheme of its own, as a generator would send them all at once.
 */
export const API_TOKEN_SECURITY: Array<Record<string, string[]>> = [{ apiToken: [] }];
/** A route without authentication says so in the document (`security: []`) rather than leaving it unsaid. */
export const PUBLIC_ROUTE: { security: Array<Record<string, string[]>> } = { security: [] };

interface RouteParts {
  /** Stable and camelCase: the method name generated clients give the operation. */
  operationId: string;
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
  return { summary, tags: [tag], security: API_TOKEN_SECURITY, ...parts, response: responses(success) };
}
