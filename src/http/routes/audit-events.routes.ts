import { requestFailure } from '../../wire/request-errors.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AuditService } from '../../domain/audit/audit.service.js';
import { decodeCursor, PageResponse, pageSize, toPageResponse } from '../../wire/cursor.js';
import { apiRouteSchema } from '../route-schema.js';
import { toAuditEvent } from '../../wire/audit-event.presenter.js';
import { AuditEvent, AuditQuery } from '../../wire/audit-events.schemas.js';

/**
 * Timestamps are stored in one canonical form (ISO, UTC, milliseconds), so bounds are normalised to
 * it; an offset that moves the instant out of the years 0001 to 9999 leaves that form, and both
 * engines' range, so it is refused.
 */
function canonical(field: 'since' | 'until', timestamp: string | undefined): string | undefined {
  if (timestamp === undefined) return undefined;
  const instant = new Date(timestamp).toISOString();
  if (!/^\d{4}-/.test(instant) || instant.startsWith('0000-')) {
    throw requestFailure.yearOutOfRange(field);
  }
  return instant;
}

export const auditEventRoutes: FastifyPluginAsyncTypebox<{ audit: AuditService }> = async (app, { audit }) => {
  app.get(
    '/admin/audit_events',
    {
      schema: apiRouteSchema('admin', 'List audit events', PageResponse('audit_events', AuditEvent), {
        operationId: 'listAuditEvents',
        description:
          'Newest first, across the workspace (both environments unless environment is given), cursor-paginated.',
        querystring: AuditQuery,
      }),
    },
    async (request) => {
      const { query } = request;
      // A person is (issuer, sub): one without the other would match people of several providers.
      if ((query.person_issuer === undefined) !== (query.person_sub === undefined))
        throw requestFailure.invalidField(
          query.person_sub === undefined ? 'person_sub' : 'person_issuer',
          'Filter by a person with both person_issuer and person_sub.',
        );
      const page = await audit.listAuditEvents(request.caller, {
        environment: query.environment,
        teamId: query.team_id === undefined ? undefined : Number(query.team_id),
        action: query.action,
        person:
          query.person_issuer === undefined || query.person_sub === undefined
            ? undefined
            : { issuer: query.person_issuer, subject: query.person_sub },
        since: canonical('since', query.since),
        until: canonical('until', query.until),
        beforeId: decodeCursor(query.cursor),
        limit: pageSize(query.limit),
      });
      return toPageResponse('audit_events', page, toAuditEvent);
    },
  );
};
