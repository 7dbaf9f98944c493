export {
  accessRulesToSql,
  AccessRuleError,
  type AccessRulesToSqlOptions,
  type SqlDialect,
  type SqlFilter,
  type SqlParameter,
} from './access-rules-sql.js';
export { createClient, type ClientOptions, type UgsClient, type WriteOptions } from './client.js';
export {
  createEmbedTokenVerifier,
  EmbedOriginError,
  EmbedSingleUseError,
  type EmbedClaims,
  type EmbedTokenVerifier,
  type EmbedTokenVerifierOptions,
} from './embed-verifier.js';
export { EmbedTokenRevokedError, RevocationsUnavailableError, type RevocationCheckOptions } from './revocation-list.js';
export {
  keepEmbedTokenFresh,
  refreshEmbedToken,
  type EmbedTokenKeeper,
  type EmbedTokenKeeperOptions,
  type RefreshEmbedTokenOptions,
  type RefreshedEmbedToken,
} from './embed-session.js';
export { UgsError } from './errors.js';
export type * from './types.js';
export { verifyWebhook, WebhookVerificationError, WEBHOOK_TOLERANCE_S } from './webhook-verifier.js';
