import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { AppError } from '../domain/errors.js';
import type { Environment } from '../domain/tenancy.js';
import { cliCaller, environmentOption, printJson, subcommand, withRuntime, type CommonOptions } from './context.js';
import { renderSyncPlan, summaryLine } from './sync-plan.view.js';

async function readInput(file: string): Promise<string> {
  if (file !== '-') return readFile(file, 'utf8');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** JSON.parse, its failure worded as the API words invalid JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError('invalid_json', 'The text is not valid JSON.');
  }
}

/** `ugs groups sync FILE`: the desired state in, the plan out, applied unless --dry-run (SPEC §16). */
export function addGroupsSyncCommand(groups: Command): void {
  subcommand(groups, 'sync', 'make the groups of one environment match a file: show the plan, then apply it')
    .argument('<file>', 'NDJSON (one group per line) or a JSON array of groups; - for stdin')
    .addOption(environmentOption().default('Customer'))
    .addOption(new Option('--dry-run', 'show the plan and change nothing'))
    .addOption(new Option('--prune <tag>', 'also delete the groups carrying this tag that the file leaves out'))
    .action(
      async (file: string, options: CommonOptions & { environment: Environment; dryRun?: boolean; prune?: string }) => {
        // Imported when a sync runs: the wire schemas cost every other command's start some 300 ms.
        const { readSyncFile } = await import('../wire/user-group-sync.reader.js');
        const { presentSync } = await import('../wire/user-group-sync.presenter.js');
        const lines = readSyncFile(await readInput(file), parseJson);
        await withRuntime(options, async (runtime) => {
          const caller = await cliCaller(runtime, options.workspace, options.environment);
          const started = Date.now();
          const tty = process.stderr.isTTY === true;
          const result = await runtime.services.userGroupSync.sync(caller, lines, {
            dryRun: options.dryRun === true,
            ...(options.prune !== undefined ? { pruneTag: options.prune } : {}),
            // A long apply says what it is doing (on a terminal: a line it then replaces).
            onApply: (steps) =>
              process.stderr.write(`${tty ? '\r' : ''}applying ${steps} changes in one transaction…${tty ? '' : '\n'}`),
          });
          if (tty && result.applied)
            process.stderr.write(`\rapplied in ${((Date.now() - started) / 1000).toFixed(1)} s${' '.repeat(20)}\n`);
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
      },
    );
}
