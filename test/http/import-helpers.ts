import { expect } from 'vitest';
import { inject, type ApiResponse } from '../support/http-client.js';
import { snapshotDatabase } from './helpers.js';
import { withQuery } from '../support/paged-list.js';
import { expectSuccess } from '../support/success-envelope.js';
import { apiToken, type As } from '../support/callers.js';
import type { TestApp } from '../support/test-app.js';

/** Shared by the HTTP import's test files (docs/api.md, "Importing user groups over HTTP"). */

export const IMPORT_PATH = '/api/admin/user_groups/import';

export interface ImportRequest {
  dryRun?: boolean;
  replaceTokens?: boolean;
  /** `require_fields`, sent as it is. */
  requireFields?: string;
  /** The JSON array form instead of NDJSON. */
  array?: boolean;
  /** Sent as it is (NDJSON content type unless `array`). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  as?: As;
}

/** NDJSON text: each value as one line of JSON, except strings, sent as they are (for malformed lines). */
export const importLines = (lines: readonly unknown[]): string =>
  lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n';

export function importCall(t: TestApp, lines: readonly unknown[], request: ImportRequest = {}): Promise<ApiResponse> {
  return inject(t.app, {
    method: 'POST',
    path: withQuery(IMPORT_PATH, {
      dry_run: request.dryRun ? 'true' : undefined,
      replace_tokens: request.replaceTokens ? 'true' : undefined,
      require_fields: request.requireFields,
    }),
    token: apiToken(t, request.as),
    rawBody: request.rawBody ?? (request.array ? JSON.stringify(lines) : importLines(lines)),
    headers: { 'content-type': request.array ? 'application/json' : 'application/x-ndjson', ...request.headers },
  });
}

export interface ImportSummaryBody {
  dry_run: boolean;
  created: number;
  updated: number;
  unchanged: number;
  rejected: Array<{ line?: number; index?: number; reason: string }>;
  lacking: Array<{ line?: number; index?: number; provided_id: string; fields: string[] }>;
  lacking_lines: number;
  lacking_fields: Record<string, { lacked: number }>;
}

/** The `import` object of a successful import. */
export async function importOk(
  t: TestApp,
  lines: readonly unknown[],
  request: ImportRequest = {},
): Promise<ImportSummaryBody> {
  return expectSuccess(await importCall(t, lines, request)).import as ImportSummaryBody;
}

/**
 * Runs `action` and asserts that nothing was written: every row as it was. The one thing left out is
 * PostgreSQL's team_id sequence: a create the database refuses (a token another group holds) uses a
 * value up, as any refused insert does; the next group's team_id skips it.
 */
export async function expectNothingWritten<T>(t: TestApp, action: () => Promise<T>): Promise<T> {
  const rows = async () => {
    const { pg_sequences: sequences, ...tables } = await snapshotDatabase(t);
    return {
      ...tables,
      sequences: (sequences ?? []).filter(
        (row) => (row as { sequencename?: string }).sequencename !== 'user_groups_team_id_seq',
      ),
    };
  };
  const before = await rows();
  const result = await action();
  expect(await rows()).toEqual(before);
  return result;
}
