import { Type } from 'typebox';
import { Count, EnvironmentTag, IdParam, IssuedId } from './common.schemas.js';

/*
 * Usage per group and per UTC day (docs/api.md#usage-per-group): GET /api/admin/usage (one group's daily series) and
 * GET /api/admin/usage/top (the busiest groups). Days are UTC dates; both bounds are included.
 */

const DayInput = (description: string) =>
  Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: `${description}: a UTC date such as 2026-11-24.` });

const Day = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A UTC date.' });

export const UsageMetricName = Type.Union(
  [Type.Literal('embed_tokens_minted'), Type.Literal('verifications'), Type.Literal('reads')],
  {
    description:
      'What is counted: embed tokens minted, verifications (group and embed tokens), get-or-create reads of an existing group.',
  },
);

const Counts = {
  embed_tokens_minted: Count,
  verifications: Count,
  reads: Type.Integer({ ...Count, description: 'get-or-create requests that found the group' }),
};

const RANGE_QUERY = {
  environment: Type.Optional(EnvironmentTag),
  since: Type.Optional(DayInput('First day counted (default: 29 days before until)')),
  until: Type.Optional(DayInput('Last day counted (default: today, UTC)')),
};

export const UsageSeriesQuery = Type.Object(
  { team_id: IdParam("The group's team_id."), ...RANGE_QUERY },
  { additionalProperties: false },
);

export const TopUsageQuery = Type.Object(
  {
    ...RANGE_QUERY,
    metric: Type.Optional(
      Type.String({ maxLength: 32, description: 'embed_tokens_minted, verifications (default) or reads.' }),
    ),
    limit: Type.Optional(
      Type.String({ pattern: '^[0-9]{1,4}$', description: 'How many groups, 1 to 100 (default 10).' }),
    ),
  },
  { additionalProperties: false },
);

export const UsageDay = Type.Object({ day: Day, ...Counts });

export const UsageSeriesResponse = Type.Object({
  success: Type.Literal(1),
  team_id: IssuedId,
  user_group_id: Type.String(),
  since: Day,
  until: Day,
  days: Type.Array(UsageDay, { description: 'Every day of the range, oldest first; zeros where nothing was counted.' }),
  totals: Type.Object(Counts),
});

export const TopUsageGroup = Type.Object({
  team_id: IssuedId,
  user_group_id: Type.String(),
  name: Type.String(),
  ...Counts,
});

export const TopUsageResponse = Type.Object({
  success: Type.Literal(1),
  since: Day,
  until: Day,
  metric: UsageMetricName,
  user_groups: Type.Array(TopUsageGroup, {
    description: 'Highest sum of the metric first (ties: lowest team_id first); groups with none are left out.',
  }),
});
