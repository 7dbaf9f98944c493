import type { Clock } from '../clock.js';
import { failure } from '../errors.js';
import { requireScope } from '../api-tokens/scopes.js';
import type { Caller } from '../tenancy.js';
import type { UserGroupStore } from '../user-groups/user-groups.port.js';
import type { UsageStore } from './usage.port.js';
import type { UsageCounts, UsageDay, UsageMetric, UsageRange, UsageTotal } from './usage.records.js';
import { addDays, dayOf, daysSpanned, DEFAULT_SERIES_DAYS, topLimit, usageMetric, usageRange } from './usage.rules.js';

export interface UsageSeriesInput {
  teamId: number;
  since?: string;
  until?: string;
}

export interface TopUsageInput {
  since?: string;
  until?: string;
  metric?: string;
  limit?: number;
}

export interface UsageSeries extends UsageRange {
  teamId: number;
  providedId: string;
  /** Every day of the range, oldest first; a day nothing was counted on has zeros. */
  days: UsageDay[];
  totals: UsageCounts;
}

export interface TopUsage extends UsageRange {
  metric: UsageMetric;
  groups: UsageTotal[];
}

export type UsageService = ReturnType<typeof createUsageService>;

const today = (clock: Clock): string => dayOf(Date.parse(clock()));

/** The two reads of usage (docs/api.md#usage-per-group): admin scope, within the caller's tenant. */
export function createUsageService({
  store,
  clock,
}: {
  store: Pick<UsageStore, 'listUsageDays' | 'listTopUsage'> & Pick<UserGroupStore, 'findUserGroupByTeamId'>;
  clock: Clock;
}) {
  return {
    /** One group's daily series; the group must exist in the caller's tenant. */
    async series(caller: Caller, input: UsageSeriesInput): Promise<UsageSeries> {
      requireScope(caller, 'admin');
      const range = usageRange(today(clock), input, DEFAULT_SERIES_DAYS);
      const group = await store.findUserGroupByTeamId(caller.tenant, input.teamId);
      if (!group) throw failure.userGroupNotFound();
      const counted = new Map((await store.listUsageDays(caller.tenant, group.teamId, range)).map((d) => [d.day, d]));
      const days: UsageDay[] = [];
      const totals: UsageCounts = { embedTokensMinted: 0, verifications: 0, reads: 0 };
      for (let i = 0; i < daysSpanned(range); i++) {
        const day = addDays(range.since, i);
        const counts = counted.get(day) ?? { day, embedTokensMinted: 0, verifications: 0, reads: 0 };
        days.push(counts);
        totals.embedTokensMinted += counts.embedTokensMinted;
        totals.verifications += counts.verifications;
        totals.reads += counts.reads;
      }
      return { teamId: group.teamId, providedId: group.providedId, ...range, days, totals };
    },

    /** The busiest groups of the caller's tenant over the range by one metric. */
    async top(caller: Caller, input: TopUsageInput): Promise<TopUsage> {
      requireScope(caller, 'admin');
      const range = usageRange(today(clock), input, DEFAULT_SERIES_DAYS);
      const metric = usageMetric(input.metric);
      const limit = topLimit(input.limit);
      const groups = await store.listTopUsage(caller.tenant, { ...range, metric, limit });
      return { ...range, metric, groups };
    },
  };
}
