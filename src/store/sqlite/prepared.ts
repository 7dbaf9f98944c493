import type { Database, Statement } from 'better-sqlite3';

/**
 * An object of statements, each compiled the first time it is used and reused after that. Lazy
 * because the tables may not exist until migrate() has run on a fresh file. With `raw`, rows come as
 * arrays of cells in column order.
 */
export function preparedOnFirstUse<K extends string>(
  db: Database,
  sources: Record<K, string>,
  options: { raw?: boolean } = {},
): Record<K, Statement> {
  const statements = {} as Record<K, Statement>;
  for (const key of Object.keys(sources) as K[]) {
    let statement: Statement | undefined;
    Object.defineProperty(statements, key, {
      enumerable: true,
      get: () => (statement ??= options.raw ? db.prepare(sources[key]).raw(true) : db.prepare(sources[key])),
    });
  }
  return statements;
}
