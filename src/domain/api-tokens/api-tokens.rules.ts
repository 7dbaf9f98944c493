import { creationChanges } from '../audit/audit-entry.js';
import type { AuditEntry, Audited } from '../audit/audit-entry.js';
import type { ApiTokenRecord, RateLimit } from './api-token.records.js';

/*
 * What creating, re-limiting and revoking an API token writes, as pure functions over the rows the
 * engine read inside the change's transaction. The token's hash never enters an audit event: only
 * what an admin may see.
 */

/** A token's rate limit as the API and its audit events show it. */
export function rateLimitAuditValue(rateLimit: RateLimit | null): { per_second: number; burst: number } | null {
  return rateLimit && { per_second: rateLimit.perSecond, burst: rateLimit.burst };
}

function sameRateLimit(a: RateLimit | null, b: RateLimit | null): boolean {
  return a === null || b === null ? a === b : a.perSecond === b.perSecond && a.burst === b.burst;
}

export function apiTokenCreated(record: ApiTokenRecord): AuditEntry {
  const fields = { id: record.id, name: record.name, scope: record.scope, environment: record.environment };
  return {
    action: 'api_token.created',
    workspaceId: record.workspaceId,
    environment: record.environment,
    // A token on the server's default limit records no rate_limit, as before there were per-token limits.
    changes: creationChanges(
      record.rateLimit ? { ...fields, rate_limit: rateLimitAuditValue(record.rateLimit) } : fields,
    ),
    subject: () => ({ kind: 'api_token', apiToken: record }),
  };
}

/** A live token's new limit, written (`write`) and audited only when it differs; null for no live token. */
export function planRateLimitUpdate(
  before: ApiTokenRecord | null,
  rateLimit: RateLimit | null,
): Audited<ApiTokenRecord | null> & { write?: ApiTokenRecord } {
  if (!before || sameRateLimit(before.rateLimit, rateLimit)) return { result: before, entries: [] };
  const after = { ...before, rateLimit };
  const entry: AuditEntry = {
    action: 'api_token.updated',
    workspaceId: after.workspaceId,
    environment: after.environment,
    changes: {
      rate_limit: { before: rateLimitAuditValue(before.rateLimit), after: rateLimitAuditValue(after.rateLimit) },
    },
  };
  return { result: after, entries: [entry], write: after };
}

/** The revoked token (null when it was unknown or already revoked) and its audit event. */
export function apiTokenRevoked(record: ApiTokenRecord | null): Audited<ApiTokenRecord | null> {
  if (!record) return { result: null, entries: [] };
  const entry: AuditEntry = {
    action: 'api_token.revoked',
    workspaceId: record.workspaceId,
    environment: record.environment,
    changes: { revoked_at: { before: null, after: record.revokedAt } },
    subject: () => ({ kind: 'api_token', apiToken: record }),
  };
  return { result: record, entries: [entry] };
}
