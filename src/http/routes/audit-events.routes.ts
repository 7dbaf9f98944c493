import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AuditService } from '../../domain/audit.service.js';
import type { AuditEventRecord } from '../../domain/models.js';
import { AppError } from '../../domain/errors.js';
import { EnvironmentTag, Timestamp, TimestampInput } from '../common.schemas.js';
import { decodeCursor, IdParam, PageQuery, PageResponse, pageSize, toPageResponse } from '../cursor.js';
import { apiRouteSchema } from '../route-schema.js';

const AuditEvent = Type.Object({
  id: Type.Integer(),
  at: Timestamp,
  environment: Type.Union([EnvironmentTag, Type.Null()]),
  actor: Type.Object({
    type: Type.Union([Type.Literal('api_token'), Type.Literal('cli')]),
    api_token_id: Type.Optional(Type.Integer()),
    name: Type.Optional(Type.String()),
  }),
  action: Type.String(),
  team_id: Type.Union([Type.Integer(), Type.Null()]),
  provided_id: Type.Union([Type.String(), Type.Null()]),
  changes: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'Changed fields with before and after values; never a token.' }),
  request_id: Type.Union([Type.String(), Type.Null()]),
});

const AuditQuery = Type.Object(
  {
    environment: Type.Optional(EnvironmentTag),
    team_id: Type.Optional(IdParam('Only events of this group.')),
    action: Type.Optional(Type.String({ maxLength: 64, description: 'e.g. user_group.created' })),
    since: Type.Optional(TimestampInput('Inclusive lower bound on at')),
    until: Type.Optional(TimestampInput('Exclusive upper bound on at')),
    ...PageQuery,
  },
  { additionalProperties: false },
);

const toAuditEvent = (event: AuditEventRecord) => ({
  id: event.id,
  at: event.at,
  environment: event.environment,
  actor: event.actor.type === 'api_token' ? { type: 'api_token' as const, api_token_id: event.actor.apiTokenId, name: event.actor.name } : { type: 'cli' as const },
  action: event.action,
  team_id: event.teamId,
  provided_id: event.providedId,
  changes: event.changes,
  request_id: event.requestId,
});

/**
 * Timestamps are stored in one canonical form (ISO, UTC, milliseconds), so bounds are normalised to
 * it; an offset that moves the instant out of the years 0001 to 9999 leaves that form, and both
 * engines' range, so it is refused.
 */
function canonical(field: 'since' | 'until', timestamp: string | undefined): string | undefined {
  if (timestamp === undefined) return undefined;
  const instant = new Date(timestamp).toISOString();
  if (!/^\d{4}-/.test(instant) || instant.startsWith('0000-')) {
    throw new AppError('invalid_field', `"${field}" must fall within the years 0001 to 9999 (UTC).`, { field });
  }
  return instant;
}

export const auditEventRoutes: FastifyPluginAsyncTypebox<{ audit: AuditService }> = async (app, { audit }) => {
  app.get(
    '/admin/audit_events',
    {
      schema: apiRouteSchema('admin', 'List audit events', PageResponse('audit_events', AuditEvent), {
        description: 'Newest first, across the workspace (both environments unless environment is given), cursor-paginated.',
        querystring: AuditQuery,
      }),
    },
    async (request) => {
      const { query } = request;
      const page = await audit.listAuditEvents(request.caller, {
        environment: query.environment,
        teamId: query.team_id === undefined ? undefined : Number(query.team_id),
        action: query.action,
        since: canonical('since', query.since),
        until: canonical('until', query.until),
        beforeId: decodeCursor(query.cursor),
        limit: pageSize(query.limit),
      });
      return toPageResponse('audit_events', page, toAuditEvent);
    },
  );
};
