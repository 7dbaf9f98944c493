import { requestFailure } from './request-errors.js';
import { Type, type TSchema } from 'typebox';
import type { Page } from '../domain/pagination.js';
import { MAX_PAGE_SIZE } from './contract.constants.js';
import { DEFAULT_PAGE_SIZE } from './page.schemas.js';
import { Success } from './envelope.js';

// Cursors are opaque to clients so the paging key can change without breaking them.
const PREFIX = 'c1.';
// Exactly what encodeCursor writes: anything else (1e3, 0x10, padding) was not handed out.
const CURSOR_TEXT = /^c1\.([1-9][0-9]{0,15})$/;

export function encodeCursor(key: number | null): string | null {
  return key === null ? null : Buffer.from(`${PREFIX}${key}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const match = CURSOR_TEXT.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const key = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(key)) {
    throw requestFailure.foreignCursor();
  }
  return key;
}

export function pageSize(limit: string | undefined): number {
  const size = limit === undefined ? DEFAULT_PAGE_SIZE : Number(limit);
  if (size > MAX_PAGE_SIZE) throw requestFailure.pageTooLarge(MAX_PAGE_SIZE);
  return size;
}

const NextCursor = Type.Union([Type.String(), Type.Null()], {
  description: 'Pass as cursor for the next page; null on the last page.',
});

/** A page on the wire: `{success, <plural>: [...], next_cursor}`. */
export function PageResponse<K extends string, S extends TSchema>(plural: K, item: S) {
  return Type.Object({
    success: Success,
    next_cursor: NextCursor,
    ...({ [plural]: Type.Array(item) } as Record<K, ReturnType<typeof Type.Array<S>>>),
  });
}

export function toPageResponse<K extends string, T, W>(plural: K, page: Page<T>, present: (item: T) => W) {
  return {
    success: 1 as const,
    next_cursor: encodeCursor(page.next),
    ...({ [plural]: page.items.map(present) } as Record<K, W[]>),
  };
}
