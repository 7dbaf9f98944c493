/** A statement ready for node-postgres: positional text and its values. */
export interface Statement {
  text: string;
  values: unknown[];
}

export type StatementFactory = (parameters?: Record<string, unknown>) => Statement;

/**
 * Compiles SQL written with `@name` parameters (as the SQLite store writes them) into PostgreSQL's
 * `$n` form once, and returns a function that orders a parameter object into the values. A missing
 * parameter throws rather than binding NULL, so a typo cannot silently widen a WHERE clause; pass an
 * explicit null for "none".
 */
export function statement(source: string): StatementFactory {
  const names: string[] = [];
  const text = source.replace(/@([A-Za-z_][A-Za-z0-9_]*)/g, (_match, name: string) => {
    const index = names.includes(name) ? names.indexOf(name) : names.push(name) - 1;
    return `$${index + 1}`;
  });
  return (parameters = {}) => ({
    text,
    values: names.map((name) => {
      const value = parameters[name];
      if (value === undefined) throw new Error(`SQL parameter @${name} is missing`);
      return value;
    }),
  });
}

/** Compiles every statement of a module once, when the module's methods are built. */
export function statements<K extends string>(sources: Record<K, string>): Record<K, StatementFactory> {
  return Object.fromEntries(Object.entries<string>(sources).map(([key, source]) => [key, statement(source)])) as Record<
    K,
    StatementFactory
  >;
}
