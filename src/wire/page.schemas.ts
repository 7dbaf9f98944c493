import { Type } from 'typebox';
import { MAX_PAGE_SIZE } from './contract.constants.js';

export const DEFAULT_PAGE_SIZE = 100;

/** Query parameters arrive as text; Ajv does not coerce, so numbers are checked by pattern. */
export const PageQuery = {
  limit: Type.Optional(
    Type.String({
      pattern: '^[1-9][0-9]{0,3}$',
      description: `Page size, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).`,
    }),
  ),
  cursor: Type.Optional(Type.String({ maxLength: 64, description: 'next_cursor of the previous page.' })),
};
