import type { FastifyRequest } from 'fastify';
import type { PersonCaller } from '../../domain/console-sessions/oidc-session.records.js';
import { failure } from '../../domain/errors.js';
import { ENVIRONMENTS, scopeIncludes, type Environment, type Scope } from '../../domain/tenancy.js';

/*
 * What a person's console access (read, write, admin: docs/deployment.md, "What read, write and admin
 * unlock") lets them do through /api. API tokens have one scope per token and the operations check it;
 * a person's access is checked here, per route, in the environment the request acts in, and the
 * operations then see an admin caller (the check that mattered is done) that withholds secrets (group
 * tokens) from read access. Routes not listed need admin: a new route is closed until it is placed.
 *
 * - read: every list and view (groups without their tokens, schemas, data sources, webhooks and their
 *   deliveries, usage, signing keys, audit trail);
 * - write: read, plus a group's token revealed, groups created, edited, rotated, deleted and synced,
 *   embed tokens minted and revoked;
 * - admin: everything, API tokens, schemas, data sources, webhook endpoints, signing keys included.
 */

const NEEDED: Record<string, Scope> = {
  'GET /api/admin/user_groups': 'read',
  'GET /api/admin/user_groups/:team_id': 'read',
  'GET /api/admin/audit_events': 'read',
  'GET /api/admin/data_sources': 'read',
  'GET /api/admin/data_sources/:id': 'read',
  'GET /api/admin/schemas': 'read',
  'GET /api/admin/signing_keys': 'read',
  'GET /api/admin/usage': 'read',
  'GET /api/admin/usage/top': 'read',
  'GET /api/admin/webhook_endpoints': 'read',
  'GET /api/admin/webhook_endpoints/:id': 'read',
  'GET /api/admin/webhook_deliveries': 'read',
  // GET /api/user creates a group that does not exist, and answers with its token.
  'GET /api/user': 'write',
  'PUT /api/user': 'write',
  'POST /api/user': 'write',
  'DELETE /api/user': 'write',
  'POST /api/user/verify': 'write',
  'POST /api/user/embed_token': 'write',
  'POST /api/user/embed_token/revoke': 'write',
  'POST /api/admin/user_groups/sync': 'write',
};

const insufficientAccess = failure.insufficientConsoleAccess;

/** The caller the operations see for a person's request; throws `insufficient_scope` when their access falls short. */
export function admitPerson(request: FastifyRequest, caller: PersonCaller): PersonCaller {
  const needed = NEEDED[`${request.method} ${request.routeOptions.url ?? ''}`] ?? 'admin';
  const asked = (request.query as Record<string, unknown> | undefined)?.environment;
  const environment = ENVIRONMENTS.includes(asked as Environment) ? (asked as Environment) : caller.tenant.environment;
  const granted = caller.access.find(
    (tenant) => tenant.workspaceId === caller.tenant.workspaceId && tenant.environment === environment,
  )?.access;
  if (granted === undefined || !scopeIncludes(granted, needed)) throw insufficientAccess(needed, environment);
  return {
    ...caller,
    scope: 'admin',
    // Read access sees no group token, in whichever environment it reads.
    ...(scopeIncludes(granted, 'write') ? {} : { withholdSecrets: true as const }),
  };
}
