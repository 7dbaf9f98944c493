import type { InputPosition } from '../domain/errors.js';
import type { ImportSummary } from '../domain/user-groups/user-group-transfer.service.js';

/** How an import's items were written: NDJSON (positions are lines) or a JSON array (indexes). */
export type ImportForm = 'lines' | 'array';

/** The domain's line number of an item, as the body (or file) named it: an array's index i is line i + 1. */
export const importPosition = (line: number, form: ImportForm): InputPosition =>
  form === 'array' ? { index: line - 1 } : { line };

/** An item as the CLI names it: `line 7` (NDJSON, from 1) or `index 6` (array, from 0), as the summary's fields. */
export const positionLabel = (at: InputPosition): string => ('line' in at ? `line ${at.line}` : `index ${at.index}`);

/** The domain's line number of an item, named as the CLI names it. */
export const lineLabel = (line: number, form: ImportForm): string => positionLabel(importPosition(line, form));

/**
 * An import's summary as the API shows it: the CLI's counts, each refused line named as the body
 * named it, by line (NDJSON) or index (array; the domain counts it as line index + 1).
 */
export function presentImport(summary: ImportSummary, dryRun: boolean, form: ImportForm) {
  const position = (line: number) => importPosition(line, form);
  return {
    success: 1 as const,
    import: {
      dry_run: dryRun,
      created: summary.created,
      updated: summary.updated,
      unchanged: summary.unchanged,
      rejected: summary.rejected.map(({ line, reason }) => ({ ...position(line), reason })),
      // No supplement over HTTP (a line carries its fields itself): what each line lacked, not what was supplied.
      lacking: summary.lacking.map(({ line, provided_id, fields }) => ({ ...position(line), provided_id, fields })),
      lacking_lines: summary.lacking_lines,
      lacking_fields: Object.fromEntries(
        Object.entries(summary.lacking_fields).map(([field, { lacked }]) => [field, { lacked }]),
      ),
    },
  };
}
