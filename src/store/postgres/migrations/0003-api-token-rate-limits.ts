import type { Migration } from '../../migration.js';

/**
 * An API token's own rate limit: both columns or neither (NULL: the server's default applies).
 * Nullable columns without a default change only the catalogue; no row is rewritten.
 */
export const apiTokenRateLimits: Migration = {
  version: 3,
  name: 'api token rate limits',
  kind: 'contract',
  sql: `
ALTER TABLE api_tokens
  ADD COLUMN rate_limit_per_second double precision CHECK (rate_limit_per_second > 0),
  ADD COLUMN rate_limit_burst integer CHECK (rate_limit_burst >= 1),
  ADD CONSTRAINT api_tokens_rate_limit_complete CHECK ((rate_limit_per_second IS NULL) = (rate_limit_burst IS NULL));
`,
};
