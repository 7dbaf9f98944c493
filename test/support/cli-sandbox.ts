// A temp dir with a SQLite database path in it, and the `ugs` commands the CLI tests run against it:
// the commander program in the test's process (see ugs-in-process.ts; `serve` as a real process),
// real SQLite files, real sockets.
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { readJsonLines, writeJsonLines } from './json-lines.js';
import { startServe, stopAllServeProcesses, type ServeOptions, type ServeProcess } from './serve-process.js';
import { jsonOutput, type RunResult } from './ugs-command.js';
import { runUgsInProcess } from './ugs-in-process.js';

export interface Sandbox {
  dir: string;
  databasePath: string;
  databaseUrl: string;
  /** `ugs <args> --database sqlite:<dir>/ugs.db`, in process (see runUgsInProcess). */
  ugs(...args: string[]): Promise<RunResult>;
  /** The same, with `input` on the command's stdin. */
  ugsWithStdin(input: string, ...args: string[]): Promise<RunResult>;
  /** The same, with extra environment variables (UGS_ENCRYPTION_KEY, UGS_WEBHOOK_ALLOW_PRIVATE). */
  ugsWith(env: Record<string, string>, ...args: string[]): Promise<RunResult>;
  /** `ugs serve --database sqlite:<dir>/ugs.db` on a free port (see startServe). */
  serve(options?: ServeOptions): Promise<ServeProcess>;
}

const sandboxes: string[] = [];

export function sandbox(): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), 'ugs-cli-'));
  sandboxes.push(dir);
  const databasePath = join(dir, 'ugs.db');
  const databaseUrl = `sqlite:${databasePath}`;
  return {
    dir,
    databasePath,
    databaseUrl,
    ugs: (...args) => runUgsInProcess([...args, '--database', databaseUrl]),
    ugsWithStdin: (input, ...args) => runUgsInProcess([...args, '--database', databaseUrl], { input }),
    ugsWith: (env, ...args) => runUgsInProcess([...args, '--database', databaseUrl], { env }),
    serve: (options) => startServe(['--database', databaseUrl], options),
  };
}

/** Kills the servers still running, then removes the temp dirs; call in afterEach. */
export async function cleanUp(): Promise<void> {
  await stopAllServeProcesses('kill');
  for (const dir of sandboxes.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** How many rows the audit_events table of a sandbox's SQLite database holds, read directly. */
export function auditEventCount(box: Sandbox, action?: string): number {
  const db = new Database(box.databasePath, { readonly: true, fileMustExist: true });
  try {
    return action === undefined
      ? (db.prepare('SELECT count(*) FROM audit_events').pluck().get() as number)
      : (db.prepare('SELECT count(*) FROM audit_events WHERE action = ?').pluck().get(action) as number);
  } finally {
    db.close();
  }
}

/** `ugs schemas create --name <name>`; the new schema's id. */
export async function createSchema(box: Sandbox, name: string): Promise<number> {
  return jsonOutput<{ id: number }>(await box.ugs('schemas', 'create', '--name', name, '--json')).id;
}

/** `ugs data-sources create`; the new data source's id. */
export async function createDataSource(
  box: Sandbox,
  source: { providedId: string; schemaId: number; environment: 'Customer' | 'Testing'; name?: string },
): Promise<number> {
  const created = await box.ugs(
    'data-sources',
    'create',
    '--json',
    '--provided-id',
    source.providedId,
    '--name',
    source.name ?? source.providedId,
    '--schema-id',
    String(source.schemaId),
    '--environment',
    source.environment,
  );
  return jsonOutput<{ id: number }>(created).id;
}

export type Environment = 'Customer' | 'Testing';

/** One line of `ugs groups export`. */
export interface ExportedGroup {
  team_id: number;
  provided_id: string;
  name: string;
  properties: Record<string, unknown> | null;
  /** Schema id → data source provided id. */
  mapping: Record<string, string>;
  api_environment_tag: Environment;
  created_at: string;
  updated_at: string;
  token?: string;
}

/** What `ugs groups import --json` prints at the end. */
export interface ImportSummary {
  created: number;
  updated: number;
  unchanged: number;
  rejected: Array<{ line: number; reason: string }>;
  lacking: Array<{ line: number; provided_id: string; fields: string[]; supplied: string[] }>;
  supplemented: number;
}

let transferFiles = 0;
const transferFile = (box: Sandbox, kind: 'import' | 'export') => join(box.dir, `${kind}-${++transferFiles}.jsonl`);

/** `ugs groups import <path> --json <flags>`; the summary (throws unless it exits 0). */
export async function importFile(box: Sandbox, path: string, ...flags: string[]): Promise<ImportSummary> {
  return jsonOutput<ImportSummary>(await box.ugs('groups', 'import', path, '--json', ...flags));
}

/** Writes `lines` (see writeJsonLines) to a new file in the sandbox and imports it like importFile. */
export async function importGroups(
  box: Sandbox,
  lines: readonly unknown[],
  ...flags: string[]
): Promise<ImportSummary> {
  const path = transferFile(box, 'import');
  writeJsonLines(path, lines);
  return importFile(box, path, ...flags);
}

/** `ugs groups export --output <new file in the sandbox> <flags>`: the file, its text and its groups. */
export async function exportGroups(
  box: Sandbox,
  ...flags: string[]
): Promise<{ path: string; text: string; groups: ExportedGroup[] }> {
  const path = transferFile(box, 'export');
  const result = await box.ugs('groups', 'export', '--output', path, ...flags);
  expect(result, result.stderr).toMatchObject({ code: 0, stdout: '' });
  const text = readFileSync(path, 'utf8');
  const groups = readJsonLines<ExportedGroup>(path);
  expect(result.stderr).toBe(`exported ${groups.length} user groups\n`);
  return { path, text, groups };
}
