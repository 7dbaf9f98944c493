import type { Database } from 'better-sqlite3';
import type {
  EmbedTokenConsumption,
  EmbedTokenConsumptionResult,
  EmbedTokenConsumptionStore,
} from '../../domain/embed-tokens/embed-token-consumption.port.js';
import type { Synchronous } from './busy-retry.js';
import { preparedOnFirstUse } from './prepared.js';

export function consumedEmbedTokenMethods(db: Database): Synchronous<EmbedTokenConsumptionStore> {
  const sql = preparedOnFirstUse(db, {
    // The primary key settles races: of two inserts of one jti, one writes a row, the other nothing.
    consume: `INSERT INTO consumed_embed_tokens (workspace_id, jti, consumer, consumed_at, expires_at)
      VALUES (@workspaceId, @jti, @consumer, @consumedAt, @expiresAt)
      ON CONFLICT (workspace_id, jti) DO NOTHING`,
    holder: `SELECT consumer FROM consumed_embed_tokens WHERE workspace_id = @workspaceId AND jti = @jti`,
    purge: `DELETE FROM consumed_embed_tokens WHERE (workspace_id, jti) IN
      (SELECT workspace_id, jti FROM consumed_embed_tokens WHERE expires_at <= @expiredBefore LIMIT @limit)`,
  });

  // Insert and read in one write transaction: the row that beat ours cannot go in between.
  const consume = db.transaction((consumption: EmbedTokenConsumption): EmbedTokenConsumptionResult => {
    if (sql.consume.run(consumption).changes === 1) return { consumed: true };
    const row = sql.holder.get(consumption) as { consumer: string | null };
    return { consumed: false, consumer: row.consumer };
  });

  return {
    consumeEmbedToken: (consumption) => consume.immediate(consumption),
    purgeConsumedEmbedTokens: (expiredBefore, limit) => sql.purge.run({ expiredBefore, limit }).changes,
  };
}
