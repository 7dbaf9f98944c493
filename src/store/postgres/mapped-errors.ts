import { mapPostgresError } from './postgres-errors.js';

/** Sends every failure of every method through mapPostgresError, so callers only see domain errors. */
export function withPostgresErrorsMapped<T extends object>(methods: T): T {
  const mapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(methods)) {
    const call = method as (...args: unknown[]) => Promise<unknown>;
    mapped[name] = async (...args: unknown[]) => {
      try {
        return await call(...args);
      } catch (error) {
        return mapPostgresError(error);
      }
    };
  }
  return mapped as T;
}
