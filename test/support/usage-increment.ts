import type { UsageCounts, UsageIncrement } from '../../src/domain/usage/usage.records.js';
import type { Tenant } from '../../src/domain/tenancy.js';

/** One group's usage increment of one day: the counts not given are 0. */
export const usageIncrement = (
  tenant: Tenant,
  teamId: number,
  day: string,
  counts: Partial<UsageCounts>,
): UsageIncrement => ({
  workspaceId: tenant.workspaceId,
  environment: tenant.environment,
  teamId,
  day,
  embedTokensMinted: 0,
  verifications: 0,
  reads: 0,
  ...counts,
});
