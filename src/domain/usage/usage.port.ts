import type { Tenant } from '../tenancy.js';
import type { TopUsageQuery, UsageDay, UsageIncrement, UsageRange, UsageTotal } from './usage.records.js';

/** The storage port of usage counts (its engines: src/store/{sqlite,postgres}/usage.ts). */
export interface UsageStore {
  /**
   * Adds every increment to its group's day in one transaction: a row absent is inserted, a row
   * present gets the counts added (never replaced), so processes flushing the same group's day at
   * once both count. Increments of one group and day may repeat; they add up.
   */
  addUsage(increments: readonly UsageIncrement[]): Promise<void>;
  /** The days of the range on which the group (of this tenant) was counted, oldest first. */
  listUsageDays(tenant: Tenant, teamId: number, range: UsageRange): Promise<UsageDay[]>;
  /**
   * The groups of the tenant that exist now with the highest sum of `metric` over the range (ties:
   * lowest team id first), at most `limit`; groups whose sum is 0 are left out.
   */
  listTopUsage(tenant: Tenant, query: TopUsageQuery): Promise<UsageTotal[]>;
  /** Deletes the counts of every day before `before` (`YYYY-MM-DD`); returns how many rows went. */
  pruneUsage(before: string): Promise<number>;
}
