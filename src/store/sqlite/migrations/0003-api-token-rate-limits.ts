import type { Migration } from '../../migration.js';

/** An API token's own rate limit: both columns or neither (NULL: the server's default applies). */
export const apiTokenRateLimits: Migration = {
  version: 3,
  name: 'api token rate limits',
  kind: 'contract',
  sql: `
ALTER TABLE api_tokens ADD COLUMN rate_limit_per_second REAL CHECK (rate_limit_per_second > 0);
ALTER TABLE api_tokens ADD COLUMN rate_limit_burst INTEGER
  CHECK (rate_limit_burst >= 1 AND (rate_limit_burst IS NULL) = (rate_limit_per_second IS NULL));
`,
};
