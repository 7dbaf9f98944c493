import { MAX_PAGE_SIZE } from '../wire/contract.constants.js';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { DEFAULT_DATABASE_URL } from '../config/database-url.js';
import type { Caller, Environment } from '../domain/tenancy.js';
import { DEFAULT_WORKSPACE, ENVIRONMENTS } from '../domain/tenancy.js';
import { openRuntime, type Runtime } from '../runtime.js';

export const databaseOption = () =>
  new Option('--database <url>', 'sqlite:<path> or postgres://…').env('UGS_DATABASE_URL').default(DEFAULT_DATABASE_URL);

export const workspaceOption = () => new Option('--workspace <name>', 'workspace').default(DEFAULT_WORKSPACE);

export const environmentOption = (description = 'environment') =>
  new Option('--environment <environment>', description).choices(ENVIRONMENTS);

export const jsonOption = () => new Option('--json', 'machine-readable JSON output');

export interface CommonOptions {
  workspace: string;
  json?: boolean;
  database: string;
}

/** A subcommand with the options most share: --json and --database, and --workspace unless it is about workspaces. */
export function subcommand(parent: Command, name: string, description: string, { workspace = true } = {}): Command {
  const command = parent.command(name).description(description);
  if (workspace) command.addOption(workspaceOption());
  return command.addOption(jsonOption()).addOption(databaseOption());
}

/** Rows as JSON (--json) or as a table, where `cells` may word a column's values for people. */
export function printRows<R extends Record<string, unknown>>(
  rows: R[],
  json: boolean | undefined,
  cells: { [K in keyof R]?: (value: R[K]) => string } = {},
): void {
  if (json) printJson(rows);
  else
    printTable(
      rows.map((row) =>
        Object.fromEntries(
          Object.entries(row).map(([column, value]) => {
            const word = cells[column as keyof R];
            return [column, word ? word(value as R[keyof R]) : value];
          }),
        ),
      ),
    );
}

/** Opens the database for one command and always closes it again. */
export async function withRuntime<T>(
  options: { database: string; requireAllKeys?: boolean; allowPrivateWebhooks?: boolean },
  run: (runtime: Runtime) => Promise<T>,
): Promise<T> {
  const runtime = await openRuntime({
    databaseUrl: options.database,
    encryptionKey: process.env.UGS_ENCRYPTION_KEY,
    requireAllKeys: options.requireAllKeys,
    allowPrivateWebhooks: options.allowPrivateWebhooks,
  });
  try {
    return await run(runtime);
  } finally {
    await runtime.close();
  }
}

/** The CLI acts with full power inside the named workspace, recorded as actor `cli`. */
export async function cliCaller(
  runtime: Runtime,
  workspaceName: string,
  environment: Environment = 'Customer',
): Promise<Caller> {
  const workspace = await runtime.services.workspaces.requireWorkspace(workspaceName);
  return {
    tenant: { workspaceId: workspace.id, environment },
    scope: 'admin',
    actor: { type: 'cli' },
    requestId: null,
  };
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

export function printTable(rows: Array<Record<string, unknown>>): void {
  if (rows.length === 0) {
    process.stdout.write('(none)\n');
    return;
  }
  const columns = Object.keys(rows[0]!);
  const text = (value: unknown) =>
    typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value ?? '');
  // A list reads as one: `emea, pilot`.
  const cell = (value: unknown) => (Array.isArray(value) ? value.map(text).join(', ') : text(value));
  const widths = columns.map((column) => Math.max(column.length, ...rows.map((row) => cell(row[column]).length)));
  const format = (cells: string[]) =>
    cells
      .map((text, index) => text.padEnd(widths[index]!))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${format(columns)}\n`);
  for (const row of rows) process.stdout.write(`${format(columns.map((column) => cell(row[column])))}\n`);
}

/** Parses a command-line id or count; commander reports the thrown message as a usage error. */
export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 1) throw new Error(`"${value}" is not a positive whole number.`);
  return number;
}

/** Parses a command-line duration or count that may be zero. */
export function wholeNumber(value: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 0) throw new Error(`"${value}" is not a whole number.`);
  return number;
}

/** An option's parser from a parse function: commander then reports its error naming the option (or variable). */
export function optionParser<T>(parse: (text: string) => T): (text: string) => T {
  return (text) => {
    try {
      return parse(text);
    } catch (error) {
      throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
    }
  };
}

/** A page size, as the admin API allows it. */
export function pageLimit(value: string): number {
  const limit = positiveInteger(value);
  if (limit > MAX_PAGE_SIZE) throw new Error(`"${value}" is more than ${MAX_PAGE_SIZE}.`);
  return limit;
}
