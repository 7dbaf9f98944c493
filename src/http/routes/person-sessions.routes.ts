import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { PersonSessionRecord } from '../../domain/console-sessions/oidc-session.records.js';
import type { PersonSessionAdmin } from '../../domain/console-sessions/oidc-sign-in.service.js';
import { failure } from '../../domain/errors.js';
import { NoQuery } from '../../wire/common.schemas.js';
import { requestFailure } from '../../wire/request-errors.js';
import {
  PersonSessionEndedResponse,
  PersonSessionParams,
  PersonSessionsEndedResponse,
  PersonSessionsEndQuery,
  PersonSessionsQuery,
  PersonSessionsResponse,
} from '../../wire/person-sessions.schemas.js';
import { apiRouteSchema } from '../route-schema.js';

const toPersonSession = (session: PersonSessionRecord) => ({
  id: session.id,
  issuer: session.person.issuer,
  sub: session.person.subject,
  email: session.person.email,
  environment: session.environment,
  access: session.access.map((tenant) => ({
    workspace: tenant.workspaceName,
    environment: tenant.environment,
    access: tenant.access,
  })),
  created_at: session.createdAt,
  last_seen_at: session.lastSeenAt,
  expires_at: session.expiresAt,
  renew_at: session.renewAt,
});

/** People's console sessions (signed in through the identity provider) in the workspace: list, end one, end a person's. */
export const personSessionRoutes: FastifyPluginAsyncTypebox<{ personSessions: PersonSessionAdmin }> = async (
  app,
  { personSessions },
) => {
  app.get(
    '/admin/console_sessions',
    {
      schema: apiRouteSchema('admin', "List people's console sessions", PersonSessionsResponse, {
        operationId: 'listPersonSessions',
        description:
          "Sessions of people signed in through the identity provider that act in this workspace, newest first (at most 1000; expired ones until they are purged); person_issuer with person_sub keeps one person's.",
        querystring: PersonSessionsQuery,
      }),
    },
    async (request) => {
      const { person_issuer: issuer, person_sub: subject } = request.query;
      if ((issuer === undefined) !== (subject === undefined))
        throw requestFailure.invalidField(
          subject === undefined ? 'person_sub' : 'person_issuer',
          'Filter by a person with both person_issuer and person_sub.',
        );
      const person = issuer === undefined || subject === undefined ? undefined : { issuer, subject };
      const sessions = await personSessions.listSessions(request.caller, person);
      return { success: 1 as const, console_sessions: sessions.map(toPersonSession) };
    },
  );

  app.delete(
    '/admin/console_sessions',
    {
      schema: apiRouteSchema('admin', "End all of a person's console sessions", PersonSessionsEndedResponse, {
        operationId: 'endPersonSessions',
        description:
          "Every session of the person (person_issuer with person_sub) acting in this workspace: each refused from its very next request, on every instance, and audited. The person can sign in again while the identity provider's groups allow it.",
        querystring: PersonSessionsEndQuery,
      }),
    },
    async (request) => {
      const { person_issuer: issuer, person_sub: subject } = request.query;
      return {
        success: 1 as const,
        ended: await personSessions.endPersonSessions(request.caller, { issuer, subject }),
      };
    },
  );

  app.delete(
    '/admin/console_sessions/:id',
    {
      schema: apiRouteSchema('admin', "End a person's console session", PersonSessionEndedResponse, {
        operationId: 'endPersonSession',
        description: 'The session is refused from its very next request, on every instance; audited.',
        params: PersonSessionParams,
        querystring: NoQuery,
      }),
    },
    async (request) => {
      const ended = await personSessions.endSession(request.caller, Number(request.params.id));
      if (!ended) throw failure.personSessionNotFound(request.params.id);
      return { success: 1 as const };
    },
  );
};
