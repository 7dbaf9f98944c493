import { mapSqliteError } from './sqlite-errors.js';

/** The synchronous shape of an async interface: better-sqlite3 does the work, `guard` makes it async. */
export type Synchronous<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : never;
};

/** Turns synchronous methods into the async interface, sending every failure through mapSqliteError. */
export function guard<T>(methods: Synchronous<T>): T {
  const guarded: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(methods)) {
    const call = method as (...args: unknown[]) => unknown;
    guarded[name] = async (...args: unknown[]) => {
      try {
        return call(...args);
      } catch (error) {
        return mapSqliteError(error);
      }
    };
  }
  return guarded as T;
}
