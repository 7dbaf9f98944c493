import { failure } from '../errors.js';
import { USAGE_METRICS, type UsageMetric, type UsageRange } from './usage.records.js';

/*
 * Rules of usage counting and its reads (docs/api.md#usage-per-group) that need no storage: UTC days, how long counts
 * are kept, and the ranges a read may ask for.
 */

export const DAY_MS = 86_400_000;
/** Counts older than this many days (today included) are pruned. */
export const USAGE_RETENTION_DAYS = 400;
/** The longest range one read may span, in days, both ends included: all that is kept. */
export const MAX_USAGE_RANGE_DAYS = USAGE_RETENTION_DAYS;
/** The days a series shows when `since` is not given: the last 30, `until` included. */
export const DEFAULT_SERIES_DAYS = 30;
export const DEFAULT_TOP_LIMIT = 10;
export const MAX_TOP_LIMIT = 100;
export const DEFAULT_TOP_METRIC: UsageMetric = 'verifications';
/** How often a serving process writes its counts by default (`--usage-flush-ms`). */
export const DEFAULT_USAGE_FLUSH_MS = 5_000;

/** The UTC day of an instant in milliseconds, `YYYY-MM-DD`. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The day `days` after `day` (negative: before). */
export const addDays = (day: string, days: number): string => dayOf(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS);

/** Days from `since` to `until`, both included. */
export const daysSpanned = ({ since, until }: UsageRange): number =>
  Math.round((Date.parse(`${until}T00:00:00Z`) - Date.parse(`${since}T00:00:00Z`)) / DAY_MS) + 1;

/** The first day still kept on `today`: counts of the days before it are pruned. */
export const firstKeptDay = (today: string): string => addDays(today, 1 - USAGE_RETENTION_DAYS);

const invalid = failure.usageParameter;

/** A `YYYY-MM-DD` that names a day of the calendar (2026-02-30 does not). */
export function parseDay(field: 'since' | 'until', text: string): string {
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(text) ||
    Number.isNaN(Date.parse(`${text}T00:00:00Z`)) ||
    dayOf(Date.parse(`${text}T00:00:00Z`)) !== text
  )
    throw invalid(field, `"${field}" must be a UTC date such as 2026-11-24.`);
  return text;
}

/**
 * The range a read covers: `until` defaults to today (UTC), `since` to `defaultDays` days ending on
 * `until`; `since` after `until`, or a range longer than MAX_USAGE_RANGE_DAYS, is refused.
 */
export function usageRange(today: string, input: { since?: string; until?: string }, defaultDays: number): UsageRange {
  const until = input.until === undefined ? today : parseDay('until', input.until);
  const since = input.since === undefined ? addDays(until, 1 - defaultDays) : parseDay('since', input.since);
  if (since > until) throw invalid('since', '"since" must not be after "until".');
  if (daysSpanned({ since, until }) > MAX_USAGE_RANGE_DAYS)
    throw invalid('since', `A usage range spans at most ${MAX_USAGE_RANGE_DAYS} days, both ends included.`);
  return { since, until };
}

export function usageMetric(text: string | undefined): UsageMetric {
  if (text === undefined) return DEFAULT_TOP_METRIC;
  if (!(USAGE_METRICS as readonly string[]).includes(text))
    throw invalid('metric', `"metric" must be one of ${USAGE_METRICS.join(', ')}.`);
  return text as UsageMetric;
}

export function topLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_TOP_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_TOP_LIMIT)
    throw invalid('limit', `"limit" must be an integer from 1 to ${MAX_TOP_LIMIT}.`);
  return limit;
}

/**
 * Candidates ranked for a top of `limit` groups (docs/api.md#usage-per-group): the stores rank the sums first and look
 * up only the candidates, since a deleted group's counts are kept until pruned. A first round ranks `limit` +
 * TOP_CANDIDATES_SPARE; a round that filled every candidate place but found fewer than `limit` groups still there
 * ranks four times as many. Ties go to the lowest team id in every round, so a round's first candidates are the
 * previous round's, and its answer is the same as ranking every group at once.
 */
export const TOP_CANDIDATES_SPARE = 20;

export const topCandidates = (limit: number, previous?: number): number =>
  previous === undefined ? limit + TOP_CANDIDATES_SPARE : previous * 4;

/**
 * What a round of candidates answers (`undefined`: rank again with `topCandidates(limit, candidates)`): the first
 * `limit` that still exist, once there are that many or the round ranked every group with some of the metric.
 */
export function topOfRound<T>(rows: readonly T[], exists: (row: T) => boolean, limit: number, candidates: number) {
  const existing = rows.filter(exists);
  return existing.length >= limit || rows.length < candidates ? existing.slice(0, limit) : undefined;
}
