import type { InputPosition } from '../domain/errors.js';
import type { ImportSummary } from '../domain/user-groups/user-group-transfer.service.js';

/**
 * An import's summary as the API shows it: the CLI's counts, each refused line named as the body
 * named it, by line (NDJSON) or index (array; the domain counts it as line index + 1).
 */
export function presentImport(summary: ImportSummary, dryRun: boolean, form: 'lines' | 'array') {
  const position = (line: number): InputPosition => (form === 'array' ? { index: line - 1 } : { line });
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
