import type {
  EmbedTokenConsumptionResult,
  EmbedTokenConsumptionStore,
} from '../../domain/embed-tokens/embed-token-consumption.port.js';
import type { PostgresDatabase } from './postgres-database.js';
import { statements } from './statements.js';

const sql = statements({
  // The primary key settles races across every instance: of concurrent inserts of one jti exactly one
  // returns a row. A conflicting insert waits for the winner's commit, so the read that follows sees it.
  consume: `INSERT INTO consumed_embed_tokens (workspace_id, jti, consumer, consumed_at, expires_at)
    VALUES (@workspaceId, @jti, @consumer, @consumedAt::timestamptz, @expiresAt::timestamptz)
    ON CONFLICT (workspace_id, jti) DO NOTHING
    RETURNING 1`,
  holder: `SELECT consumer FROM consumed_embed_tokens WHERE workspace_id = @workspaceId AND jti = @jti`,
  purge: `DELETE FROM consumed_embed_tokens WHERE (workspace_id, jti) IN
    (SELECT workspace_id, jti FROM consumed_embed_tokens WHERE expires_at <= @expiredBefore::timestamptz LIMIT @limit)
    RETURNING 1`,
});

export function consumedEmbedTokenMethods(db: PostgresDatabase): EmbedTokenConsumptionStore {
  return {
    async consumeEmbedToken(consumption): Promise<EmbedTokenConsumptionResult> {
      const { workspaceId, jti } = consumption;
      if ((await db.rows(sql.consume({ ...consumption }))).length > 0) return { consumed: true };
      const [row] = await db.rows<{ consumer: string | null }>(sql.holder({ workspaceId, jti }));
      return { consumed: false, consumer: row?.consumer ?? null };
    },
    purgeConsumedEmbedTokens: async (expiredBefore, limit) =>
      (await db.rows(sql.purge({ expiredBefore, limit }))).length,
  };
}
