import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { inEnvironment } from '../../domain/tenancy.js';
import type { UsageCounts } from '../../domain/usage/usage.records.js';
import type { UsageService } from '../../domain/usage/usage.service.js';
import { TopUsageQuery, TopUsageResponse, UsageSeriesQuery, UsageSeriesResponse } from '../../wire/usage.schemas.js';
import { apiRouteSchema } from '../route-schema.js';

const counts = ({ embedTokensMinted, verifications, reads }: UsageCounts) => ({
  embed_tokens_minted: embedTokensMinted,
  verifications,
  reads,
});

export const usageRoutes: FastifyPluginAsyncTypebox<{ usage: UsageService }> = async (app, { usage }) => {
  app.get(
    '/admin/usage',
    {
      schema: apiRouteSchema('admin', "One group's usage per day", UsageSeriesResponse, {
        operationId: 'getUsage',
        description:
          'Embed tokens minted, verifications and reads of an existing group per UTC day, over at most 400 days (default: the last 30). Counts are written every few seconds, so the last seconds may not show yet.',
        querystring: UsageSeriesQuery,
      }),
    },
    async (request) => {
      const { query } = request;
      const series = await usage.series(inEnvironment(request.caller, query.environment), {
        teamId: Number(query.team_id),
        since: query.since,
        until: query.until,
      });
      return {
        success: 1 as const,
        team_id: series.teamId,
        user_group_id: series.providedId,
        since: series.since,
        until: series.until,
        days: series.days.map((day) => ({ day: day.day, ...counts(day) })),
        totals: counts(series.totals),
      };
    },
  );

  app.get(
    '/admin/usage/top',
    {
      schema: apiRouteSchema('admin', 'The busiest groups', TopUsageResponse, {
        operationId: 'getTopUsage',
        description:
          'The groups of one environment with the most of one metric over a range of UTC days (at most 400; default: the last 30).',
        querystring: TopUsageQuery,
      }),
    },
    async (request) => {
      const { query } = request;
      const top = await usage.top(inEnvironment(request.caller, query.environment), {
        since: query.since,
        until: query.until,
        metric: query.metric,
        limit: query.limit === undefined ? undefined : Number(query.limit),
      });
      return {
        success: 1 as const,
        since: top.since,
        until: top.until,
        metric: top.metric,
        user_groups: top.groups.map((group) => ({
          team_id: group.teamId,
          user_group_id: group.providedId,
          name: group.name,
          ...counts(group),
        })),
      };
    },
  );
};
