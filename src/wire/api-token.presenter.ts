import type { ApiTokenRecord } from '../domain/api-tokens/api-token.records.js';

/** An API token as the API shows it: never its secret, which only its creation's response carries. */
export const toApiToken = (record: ApiTokenRecord) => ({
  id: record.id,
  name: record.name,
  scope: record.scope,
  environment: record.environment,
  rate_limit: record.rateLimit && { per_second: record.rateLimit.perSecond, burst: record.rateLimit.burst },
  created_at: record.createdAt,
  last_used_at: record.lastUsedAt,
});
