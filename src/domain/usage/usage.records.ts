import type { Environment } from '../tenancy.js';

/** What the service counts per group and per UTC day (docs/api.md#usage-per-group), in the order the API lists them. */
export const USAGE_METRICS = ['embed_tokens_minted', 'verifications', 'reads'] as const;
export type UsageMetric = (typeof USAGE_METRICS)[number];

/** One group's counts of one day, or summed over days. */
export interface UsageCounts {
  /** Embed tokens minted (POST /api/user/embed_token). */
  embedTokensMinted: number;
  /** POST /api/user/verify answered with the group, for a group token or an embed token. */
  verifications: number;
  /** Get-or-create requests that found the group already there. */
  reads: number;
}

/** Counts to add to one group's day: what one process saw since its last flush. */
export interface UsageIncrement extends UsageCounts {
  workspaceId: number;
  environment: Environment;
  teamId: number;
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
}

export interface UsageDay extends UsageCounts {
  day: string;
}

/** One group's counts summed over a range of days, with what names it now. */
export interface UsageTotal extends UsageCounts {
  teamId: number;
  providedId: string;
  name: string;
}

/** Days `since` to `until`, both included, as `YYYY-MM-DD`. */
export interface UsageRange {
  since: string;
  until: string;
}

export interface TopUsageQuery extends UsageRange {
  metric: UsageMetric;
  limit: number;
}
