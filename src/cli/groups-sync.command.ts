import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { failure } from '../domain/errors.js';
import { MAX_SYNC_GROUPS } from '../wire/contract.constants.js';
import type { Environment } from '../domain/tenancy.js';
import { cliCaller, environmentOption, printJson, subcommand, withRuntime, type CommonOptions } from './context.js';
import { renderSyncPlan, summaryLine } from './sync-plan.view.js';

/** The file's bytes, undecoded: its reader decodes them strictly, so invalid UTF-8 is refused, never turned into U+FFFD. */
async function readInput(file: string): Promise<Buffer> {
  if (file !== '-') return readFile(file);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks);
}

interface SyncCommandOptions extends CommonOptions {
  environment: Environment;
  format?: SyncFormat;
  dryRun?: boolean;
  check?: boolean;
  prune?: string;
}

/** The file's groups, each with the line (or index) a refusal names. */
async function readLines(file: string, format: SyncFormat) {
  const { readSyncFile, syncLineAt } = await import('../wire/user-group-sync.reader.js');
  const bytes = await readInput(file);
  if (format === 'json') return readSyncFile(bytes);
  const { readTenantsYaml } = await import('./tenants-yaml.reader.js');
  const tenants = readTenantsYaml(bytes);
  if (tenants.length > MAX_SYNC_GROUPS) throw failure.syncTooLarge(MAX_SYNC_GROUPS);
  return tenants.map(({ line, value }) => syncLineAt(value, { line }));
}

type SyncFormat = 'json' | 'yaml';

/** YAML by the file's name or --format; JSON (an array, or NDJSON) otherwise. */
function formatOf(file: string, format: SyncFormat | undefined): SyncFormat {
  return format ?? (/\.ya?ml$/i.test(file) ? 'yaml' : 'json');
}

/** The exit code of --check when the plan would change something (0 when it would not, 1 on an error). */
const DRIFT_EXIT_CODE = 2;

/** `ugs groups sync FILE`: the desired state in, the plan out, applied unless --dry-run or --check. */
export function addGroupsSyncCommand(groups: Command): void {
  subcommand(groups, 'sync', 'make the groups of one environment match a file: show the plan, then apply it')
    .argument('<file>', 'NDJSON (one group per line), a JSON array of groups, or YAML (a list of groups); - for stdin')
    .addOption(
      new Option('--format <format>', 'how the file is written (default: yaml for .yaml/.yml, else json)').choices([
        'json',
        'yaml',
      ]),
    )
    .addOption(environmentOption().default('Customer'))
    .addOption(new Option('--dry-run', 'show the plan and change nothing'))
    .addOption(
      new Option(
        '--check',
        `as --dry-run, and exit ${DRIFT_EXIT_CODE} when the plan is not empty (drift detection in CI)`,
      ),
    )
    .addOption(new Option('--prune <tag>', 'also delete the groups carrying this tag that the file leaves out'))
    .action(async (file: string, options: SyncCommandOptions) => {
      // Imported when a sync runs: the wire schemas cost every other command's start some 300 ms.
      const { presentSync } = await import('../wire/user-group-sync.presenter.js');
      const lines = await readLines(file, formatOf(file, options.format));
      const dryRun = options.dryRun === true || options.check === true;
      await withRuntime(options, async (runtime) => {
        const caller = await cliCaller(runtime, options.workspace, options.environment);
        const started = Date.now();
        const tty = process.stderr.isTTY === true;
        const result = await runtime.services.userGroupSync.sync(caller, lines, {
          dryRun,
          ...(options.prune !== undefined ? { pruneTag: options.prune } : {}),
          // A long apply says what it is doing (on a terminal: a line it then replaces).
          onApply: (steps) =>
            process.stderr.write(`${tty ? '\r' : ''}applying ${steps} changes in one transaction…${tty ? '' : '\n'}`),
        });
        if (tty && result.applied)
          process.stderr.write(`\rapplied in ${((Date.now() - started) / 1000).toFixed(1)} s${' '.repeat(20)}\n`);
        if (options.check && result.items.some((item) => item.action !== 'unchanged'))
          process.exitCode = DRIFT_EXIT_CODE;
        if (options.json) {
          printJson(presentSync(result).sync);
          return;
        }
        const colour = process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
        process.stdout.write(renderSyncPlan(result.items, colour));
        process.stdout.write(
          summaryLine(result.summary, result.dryRun ? 'dry-run' : result.applied ? 'applied' : 'nothing'),
        );
        if (result.applied) process.stdout.write(`Sync id: ${result.id}\n`);
      });
    });
}
