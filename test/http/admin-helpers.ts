import type { DataSourceRecord } from '../../src/domain/data-sources/data-source.records.js';
import { inject, type ApiResponse } from '../support/http-client.js';
import type { TestApp } from '../support/test-app.js';
import { expectSuccess } from './helpers.js';
import { withQuery, type PageReader, type Query } from '../support/paged-list.js';
import { apiToken, type As } from '../support/callers.js';
import { USER_PATH } from '../support/user-group-api.js';

/** Shared by the admin API test files (docs/api.md#the-admin-api). */

export const ADMIN = {
  userGroups: '/api/admin/user_groups',
  apiTokens: '/api/admin/api_tokens',
  dataSources: '/api/admin/data_sources',
  schemas: '/api/admin/schemas',
  auditEvents: '/api/admin/audit_events',
} as const;

export interface AdminRequest {
  method?: string;
  path: string;
  query?: Query;
  body?: unknown;
  /** Whose token sends it (default: the default workspace's Customer admin); ignored when `token` is given. */
  as?: As;
  token?: string;
  requestId?: string;
}

/** One request to the admin API over inject. */
export function adminCall(t: TestApp, req: AdminRequest): Promise<ApiResponse> {
  return inject(t.app, {
    method: req.method ?? 'GET',
    path: withQuery(req.path, req.query),
    token: req.token ?? apiToken(t, req.as),
    ...(req.body === undefined ? {} : { body: req.body }),
    ...(req.requestId === undefined ? {} : { headers: { 'x-request-id': req.requestId } }),
  });
}

/** The success body of an admin request. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function adminOk(t: TestApp, req: AdminRequest): Promise<any> {
  return expectSuccess(await adminCall(t, req));
}

/** Reads list pages as `as` (default: the default workspace's Customer admin), for collectPages and listAll. */
export function adminReader(t: TestApp, as?: As): PageReader {
  return (path) => adminCall(t, { path, as });
}

export const ids = (items: Array<{ id: number }>): number[] => items.map((item) => item.id);
export const teamIds = (items: Array<{ team_id: number }>): number[] => items.map((item) => item.team_id);

const cursorOf = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/**
 * Paging parameters every cursor-paginated admin list refuses (400 invalid_field naming it), and
 * unknown parameters (400 unknown_field). Forged cursors include encodings of keys this service
 * never hands out: it hands out `c1.<positive decimal>` only.
 */
export const PAGING_QUERY_ERRORS: Array<[string, Query, string, string]> = [
  ['limit 1001', { limit: 1001 }, 'invalid_field', 'limit'],
  ['limit 0', { limit: 0 }, 'invalid_field', 'limit'],
  ['a negative limit', { limit: -1 }, 'invalid_field', 'limit'],
  ['a fractional limit', { limit: '1.5' }, 'invalid_field', 'limit'],
  ['a word as limit', { limit: 'ten' }, 'invalid_field', 'limit'],
  ['an empty limit', { limit: '' }, 'invalid_field', 'limit'],
  ['a huge limit', { limit: '99999999999999999999' }, 'invalid_field', 'limit'],
  ['a cursor of garbage', { cursor: 'garbage' }, 'invalid_field', 'cursor'],
  ['an empty cursor', { cursor: '' }, 'invalid_field', 'cursor'],
  ['an unencoded cursor', { cursor: 'c1.5' }, 'invalid_field', 'cursor'],
  ['a cursor of another version', { cursor: cursorOf('c2.5') }, 'invalid_field', 'cursor'],
  ['a cursor with a word for a key', { cursor: cursorOf('c1.abc') }, 'invalid_field', 'cursor'],
  ['a cursor with a negative key', { cursor: cursorOf('c1.-1') }, 'invalid_field', 'cursor'],
  ['a cursor with a fractional key', { cursor: cursorOf('c1.1.5') }, 'invalid_field', 'cursor'],
  ['a cursor with no key', { cursor: cursorOf('c1.') }, 'invalid_field', 'cursor'],
  ['a cursor with an exponent key', { cursor: cursorOf('c1.1e3') }, 'invalid_field', 'cursor'],
  ['a cursor with a hexadecimal key', { cursor: cursorOf('c1.0x10') }, 'invalid_field', 'cursor'],
  ['a cursor with a blank before the key', { cursor: cursorOf('c1. 7') }, 'invalid_field', 'cursor'],
  ['a cursor over 64 characters', { cursor: cursorOf(`c1.${'1'.repeat(60)}`) }, 'invalid_field', 'cursor'],
  ['an unknown environment', { environment: 'Production' }, 'invalid_field', 'environment'],
  ['a lower-case environment', { environment: 'testing' }, 'invalid_field', 'environment'],
  ['an unknown parameter', { foo: '1' }, 'unknown_field', 'foo'],
  ['a parameter in the wrong case', { Limit: '10' }, 'unknown_field', 'Limit'],
];

// ---------------------------------------------------------------------------------------------
// State set up through the domain services.

/** A group as /api/user shows it (GET of an existing group with a read token of its environment). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function userGroupAsUserApiShowsIt(t: TestApp, id: string, as: Omit<As, 'scope'> = {}): Promise<any> {
  const res = await inject(t.app, {
    method: 'GET',
    path: USER_PATH,
    token: apiToken(t, { ...as, scope: 'read' }),
    body: { user_group_id: id },
  });
  return expectSuccess(res).user_group;
}

/** A data source as the API shows it. */
export function wireDataSource(record: DataSourceRecord) {
  return {
    id: record.id,
    provided_id: record.providedId,
    name: record.name,
    schema_id: record.schemaId,
    api_environment_tag: record.environment,
  };
}
