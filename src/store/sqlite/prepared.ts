import type { Database, Statement } from 'better-sqlite3';

/**
 * An object of statements, each compiled the first time it is used and reused after that. Lazy
 * because the tables may not exist until migrate() has run on a fresh file.
 */
export function preparedOnFirstUse<K extends string>(db: Database, sources: Record<K, string>): Record<K, Statement> {
  const statements = {} as Record<K, Statement>;
  for (const key of Object.keys(sources) as K[]) {
    let statement: Statement | undefined;
    Object.defineProperty(statements, key, {
      enumerable: true,
      get: () => (statement ??= db.prepare(sources[key])),
    });
  }
  return statements;
}

/**
 * Named parameters for an UPDATE that writes a column only when the patch has its key
 * (`col = CASE WHEN @setKey THEN @key ELSE col END`): per key, `set<Key>` is 1 and `<key>` the value
 * when present, else 0 and null. One statement then serves every shape of patch.
 */
export function patchParameters<K extends string>(keys: readonly K[], patch: Partial<Record<K, unknown>>): Record<string, unknown> {
  const parameters: Record<string, unknown> = {};
  for (const key of keys) {
    const value = patch[key];
    parameters[`set${key.charAt(0).toUpperCase()}${key.slice(1)}`] = value === undefined ? 0 : 1;
    parameters[key] = value ?? null;
  }
  return parameters;
}
