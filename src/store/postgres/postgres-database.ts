import pg from 'pg';
import { LOST_TO_CONCURRENT_CHANGE, retryWhileContended } from '../../domain/retry-policy.js';
import type { ConnectionStats } from '../../domain/store.port.js';
import type { QueryResultRow } from 'pg';
import { isConnectionFailure, isTransientConflict } from './postgres-errors.js';
import type { Statement } from './statements.js';

export interface PostgresStoreOptions {
  /** postgres://…; the store works in the connection's search_path (e.g. `?options=-c%20search_path%3Dugs`). */
  url: string;
  /** Connections per process; several instances multiply it, so keep the sum under max_connections. */
  poolSize?: number;
  /** Longest a statement may run on the server, lock waits included. */
  statementTimeoutMs?: number;
  /** Longest a caller waits for a connection: opening one, or a free one from a busy pool. */
  connectionTimeoutMs?: number;
}

export const DEFAULT_POOL_SIZE = 10;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 5000;
export const DEFAULT_CONNECTION_TIMEOUT_MS = 3000;

/** Idle connections beyond need are closed after this long, so a burst does not pin connections. */
const IDLE_TIMEOUT_MS = 30_000;

/**
 * The client gives up on a query this long after the server's statement_timeout would have cancelled
 * it: normally the server answers first (cleanly, keeping the connection); the client-side limit only
 * fires when the server or the network went silent, so no request waits for ever.
 */
const QUERY_TIMEOUT_MARGIN_MS = 1000;

/** Runs statements: the pool (each statement on its own) or the client of an open transaction. */
export interface Queryable {
  rows<R extends QueryResultRow>(statement: Statement): Promise<R[]>;
}

export interface PostgresDatabase extends Queryable {
  /**
   * Runs `work` in one BEGIN … COMMIT on one pooled connection, rolling back when it throws. `work`
   * may run more than once (after a deadlock or serialization failure), so it must only touch the
   * database through `tx`. `statementTimeoutMs`: the statements of this transaction alone get that
   * statement_timeout (SET LOCAL, ending with it) and the client's limit past it, instead of the pool's;
   * for reads whose cost grows with the data rather than with one request.
   */
  transaction<R>(work: (tx: Queryable) => Promise<R>, options?: { statementTimeoutMs?: number }): Promise<R>;
  /**
   * Runs `work` on one pooled connection outside any transaction, collecting the WARNING notices the
   * server sends meanwhile (e.g. a table ANALYZE skipped for want of ownership).
   */
  withWarnings<R>(work: (q: Queryable) => Promise<R>): Promise<{ result: R; warnings: string[] }>;
  /** Ends the pool once it is idle; later calls are no-ops. */
  close(): Promise<void>;
  stats(): ConnectionStats;
}

function clampMs(value: number | undefined, fallback: number): number {
  return Math.max(1, Math.trunc(value ?? fallback));
}

export function openPostgresDatabase(options: PostgresStoreOptions): PostgresDatabase {
  const statementTimeoutMs = clampMs(options.statementTimeoutMs, DEFAULT_STATEMENT_TIMEOUT_MS);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: clampMs(options.poolSize, DEFAULT_POOL_SIZE),
    connectionTimeoutMillis: clampMs(options.connectionTimeoutMs, DEFAULT_CONNECTION_TIMEOUT_MS),
    idleTimeoutMillis: IDLE_TIMEOUT_MS,
    statement_timeout: statementTimeoutMs,
    query_timeout: statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS,
    // A transaction left open by a stalled process must not hold its row locks for ever.
    idle_in_transaction_session_timeout: statementTimeoutMs * 2,
    keepAlive: true,
    fallback_application_name: 'ugs',
  });
  // An idle connection that the server or the network drops emits 'error' on the pool, which would
  // crash the process without a listener. The pool has already discarded that connection and the
  // next query opens a fresh one, so there is nothing left to do here.
  pool.on('error', () => undefined);

  const runOn = async <R extends QueryResultRow>(client: pg.Pool | pg.PoolClient, statement: Statement): Promise<R[]> =>
    (await client.query<R>(statement)).rows;

  const attempt = async <R>(work: (tx: Queryable) => Promise<R>, statementTimeoutMs?: number): Promise<R> => {
    const client = await pool.connect();
    // A checked-out client has no listener of the pool's: without this one, a connection dropped
    // between two statements of the transaction would crash the process.
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken ??= error;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      let tx: Queryable = { rows: (statement) => runOn(client, statement) };
      if (statementTimeoutMs !== undefined) {
        // set_config(…, true): SET LOCAL, with the value as a parameter.
        await client.query("SELECT set_config('statement_timeout', $1, true)", [String(statementTimeoutMs)]);
        const queryTimeout = statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS;
        tx = { rows: (statement) => runOn(client, { query_timeout: queryTimeout, ...statement }) };
      }
      const result = await work(tx);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      if (broken === undefined && isConnectionFailure(error)) broken = error as Error;
      // The server rolls back by itself when the connection goes, so only a live one needs ROLLBACK.
      if (broken === undefined) {
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          broken = rollbackError as Error;
        });
      }
      throw error;
    } finally {
      client.removeListener('error', onError);
      // Releasing with an error destroys the connection instead of handing a suspect one out again.
      client.release(broken);
    }
  };

  let closing: Promise<void> | undefined;

  return {
    rows: (statement) => runOn(pool, statement),

    transaction(work, { statementTimeoutMs } = {}) {
      // A transaction that lost to a deadlock or serialization failure changed nothing: it runs again
      // whole, under the one retry policy; when that gives up, the last conflict is the error.
      let conflict: unknown;
      return retryWhileContended(
        async () => {
          try {
            return await attempt(work, statementTimeoutMs);
          } catch (error) {
            if (!isTransientConflict(error)) throw error;
            conflict = error;
            return LOST_TO_CONCURRENT_CHANGE;
          }
        },
        () => conflict as Error,
      );
    },

    async withWarnings(work) {
      const client = await pool.connect();
      const warnings: string[] = [];
      const onNotice = (notice: { severity?: string; message?: string }) => {
        if (notice.severity === 'WARNING') warnings.push(notice.message ?? '');
      };
      let broken: Error | undefined;
      const onError = (error: Error) => {
        broken ??= error;
      };
      client.on('notice', onNotice);
      client.on('error', onError);
      try {
        return { result: await work({ rows: (statement) => runOn(client, statement) }), warnings };
      } finally {
        client.removeListener('notice', onNotice);
        client.removeListener('error', onError);
        client.release(broken);
      }
    },

    close() {
      closing ??= pool.end();
      return closing;
    },

    stats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
}
