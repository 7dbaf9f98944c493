import { initial } from './0001-initial.js';
import { idempotencyKeys } from './0002-idempotency-keys.js';
import { apiTokenRateLimits } from './0003-api-token-rate-limits.js';
import { mappingSchemaAgreement } from './0004-mapping-schema-agreement.js';
import { embedTokens } from './0005-embed-tokens.js';
import { hierarchy } from './0006-hierarchy.js';
import { webhooks } from './0007-webhooks.js';
import { consoleSessions } from './0008-console-sessions.js';
import { sealedIssuers } from './0009-sealed-issuers.js';
import { catalogueNumbers } from './0010-catalogue-numbers.js';
import { accessRules } from './0011-access-rules.js';
import { groupUsage } from './0012-group-usage.js';
import { syncIds } from './0013-sync-ids.js';
import { sharedDataSourcesAndTeamIdGaps } from './0014-shared-data-sources-and-team-id-gaps.js';
import { embedTokenRevocations } from './0015-embed-token-revocations.js';
import { consumedEmbedTokens } from './0016-consumed-embed-tokens.js';
import { consolePeople } from './0017-console-people.js';
import { personIdempotencyKeys } from './0018-person-idempotency-keys.js';
import { auditEventsTeamIndex } from './0019-audit-events-team-index.js';
import type { Migration } from '../../migration.js';
import { groupUsageTenantTeamIndex } from './0020-group-usage-tenant-team-index.js';

/** In version order; append only. */
export const MIGRATIONS: readonly Migration[] = [
  initial,
  idempotencyKeys,
  apiTokenRateLimits,
  mappingSchemaAgreement,
  embedTokens,
  hierarchy,
  webhooks,
  consoleSessions,
  sealedIssuers,
  catalogueNumbers,
  accessRules,
  groupUsage,
  syncIds,
  sharedDataSourcesAndTeamIdGaps,
  embedTokenRevocations,
  consumedEmbedTokens,
  consolePeople,
  personIdempotencyKeys,
  auditEventsTeamIndex,
  groupUsageTenantTeamIndex,
];
