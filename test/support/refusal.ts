import { isAppError } from '../../src/domain/errors.js';

/** What a synchronous domain rule refused `work` with: its code and field, or null when it let it through. */
export function refusalOf(work: () => unknown): { code: string; field: string | undefined } | null {
  try {
    work();
    return null;
  } catch (error) {
    if (!isAppError(error)) throw error;
    return { code: error.code, field: error.field };
  }
}
