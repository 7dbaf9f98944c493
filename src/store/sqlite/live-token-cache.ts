import type { Database, Statement } from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import type { ApiTokenRecord } from '../../domain/api-tokens/api-token.records.js';

/** Live tokens remembered per connection; misses are not kept, so unknown tokens cannot fill it. */
const CACHED_TOKENS = 10_000;

/**
 * Every request looks its API token up, so live tokens are cached; a cached token can never outlive
 * a change. The cache is dropped whenever another connection has committed anything (PRAGMA
 * data_version moves: another worker, a CLI command) and whenever this connection changes a token.
 * Checking data_version costs a fraction of the lookup it saves.
 */
export function liveTokenCache(db: Database) {
  const tokens = new LRUCache<string, ApiTokenRecord>({ max: CACHED_TOKENS });
  let dataVersion: Statement | undefined;
  let seenVersion: unknown;
  return {
    /** The cache, emptied first if another connection has committed since the last look. */
    current(): LRUCache<string, ApiTokenRecord> {
      const version = (dataVersion ??= db.prepare('PRAGMA data_version').pluck()).get();
      if (version !== seenVersion) {
        tokens.clear();
        seenVersion = version;
      }
      return tokens;
    },
    /** Called by every change this connection makes to api_tokens. */
    invalidate: () => tokens.clear(),
  };
}
