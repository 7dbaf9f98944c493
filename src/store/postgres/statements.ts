import { createHash } from 'node:crypto';

/** A statement ready for node-postgres: positional text, its values and, when prepared, its name. */
export interface Statement {
  text: string;
  values: unknown[];
  /** Set for statements kept prepared on each connection (parsed and planned once, not per call). */
  name?: string;
  /** The client's own limit for this statement, when the pool's default is too short (an index build). */
  query_timeout?: number;
}

export type StatementFactory = (parameters?: Record<string, unknown>) => Statement;

/**
 * Compiles SQL written with `@name` parameters (as the SQLite store writes them) into PostgreSQL's
 * `$n` form once, and returns a function that orders a parameter object into the values. A missing
 * parameter throws rather than binding NULL, so a typo cannot silently widen a WHERE clause; pass an
 * explicit null for "none".
 */
export function statement(source: string, { prepared = false }: StatementOptions = {}): StatementFactory {
  const names: string[] = [];
  const text = source.replace(/@([A-Za-z_][A-Za-z0-9_]*)/g, (_match, name: string) => {
    const index = names.includes(name) ? names.indexOf(name) : names.push(name) - 1;
    return `$${index + 1}`;
  });
  // Named by content: one name can never stand for two texts, which node-postgres refuses.
  const name = prepared ? `ugs_${createHash('sha256').update(text).digest('hex').slice(0, 20)}` : undefined;
  return (parameters = {}) => ({
    ...(name === undefined ? {} : { name }),
    text,
    values: names.map((name) => {
      const value = parameters[name];
      if (value === undefined) throw new Error(`SQL parameter @${name} is missing`);
      return value;
    }),
  });
}

export interface StatementOptions {
  /**
   * Keep the statement prepared on every pooled connection. Only for statements on the hot path that
   * name their columns: a prepared `SELECT *` fails once a migration adds a column under a running
   * server ("cached plan must not change result type").
   */
  prepared?: boolean;
}

/** Compiles every statement of a module once, when the module's methods are built. */
export function statements<K extends string>(
  sources: Record<K, string>,
  options: StatementOptions = {},
): Record<K, StatementFactory> {
  return Object.fromEntries(
    Object.entries<string>(sources).map(([key, source]) => [key, statement(source, options)]),
  ) as Record<K, StatementFactory>;
}
