import { open, stat } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { once } from 'node:events';
import { Command, Option } from 'commander';
import { ENVIRONMENTS, type Environment } from '../domain/tenancy.js';
import type { UserGroupAdminView } from '../domain/user-groups/user-group.view.js';
import { presentAdminUserGroup } from '../wire/user-group.presenter.js';
import {
  cliCaller,
  environmentOption,
  pageLimit,
  positiveInteger,
  printJson,
  printRows,
  subcommand,
  withRuntime,
  type CommonOptions,
} from './context.js';
import { addGroupsSyncCommand } from './groups-sync.command.js';

const summaryRow = (group: UserGroupAdminView) => ({
  team_id: group.teamId,
  provided_id: group.providedId,
  name: group.name,
  parent_user_group_id: group.parentProvidedId,
  is_demo_group: group.isDemoGroup,
  tags: group.tags,
  // How many rules hold for the group, its ancestors' included (docs/api.md#access-rules); `groups show` lists them.
  access_rules: group.computedAccessRules.length,
  environment: group.environment,
  updated_at: group.updatedAt,
});

/**
 * Opens the export file before anything is read, so a bad path is a clean error. A file that will
 * hold tokens is made owner-only even when it already existed with looser permissions.
 */
async function openOutput(path: string, holdsTokens: boolean): Promise<Writable> {
  const file = await open(path, 'w', holdsTokens ? 0o600 : 0o644).catch((error: NodeJS.ErrnoException) => {
    throw new Error(
      `Cannot write ${path}: ${error.code === 'ENOENT' ? 'no such directory' : (error.code ?? error.message)}.`,
    );
  });
  if (holdsTokens) await file.chmod(0o600);
  return file.createWriteStream();
}

/** Shows progress on a terminal only, so that logs and pipes stay clean. */
function progressReporter(totalBytes: number | undefined) {
  if (!process.stderr.isTTY) return { bytes: undefined, lines: undefined, done: () => undefined };
  let bytes = 0;
  let lastDraw = 0;
  const draw = (lines: number) => {
    const now = Date.now();
    if (now - lastDraw < 100) return;
    lastDraw = now;
    const percent = totalBytes ? Math.min(100, Math.floor((bytes / totalBytes) * 100)) : undefined;
    const bar = percent === undefined ? '' : `[${'#'.repeat(Math.floor(percent / 5)).padEnd(20, '.')}] ${percent}% `;
    process.stderr.write(`\r${bar}${lines} lines`);
  };
  return {
    bytes: (read: number) => (bytes = read),
    lines: draw,
    done: () => process.stderr.write('\n'),
  };
}

export function groupsCommand(): Command {
  const groups = new Command('groups').description('list, show, export, import and sync user groups');

  subcommand(groups, 'list', 'list or search the user groups of one environment, in team_id order')
    .addOption(environmentOption().default('Customer'))
    .addOption(new Option('--q <text>', 'provided_id prefix or name substring'))
    .addOption(new Option('--parent <provided_id>', 'only the children of this group'))
    .addOption(new Option('--tag <tag>', 'only groups carrying this tag'))
    .addOption(new Option('--demo', 'only demo groups').conflicts('notDemo'))
    .addOption(new Option('--not-demo', 'only groups that are not demo groups'))
    .addOption(new Option('--limit <n>', 'at most this many (up to 1000)').argParser(pageLimit).default(100))
    .action(
      async (
        options: CommonOptions & {
          environment: Environment;
          q?: string;
          parent?: string;
          tag?: string;
          demo?: boolean;
          notDemo?: boolean;
          limit: number;
        },
      ) => {
        await withRuntime(options, async (runtime) => {
          const caller = await cliCaller(runtime, options.workspace, options.environment);
          const page = await runtime.services.userGroupAdmin.listUserGroups(caller, {
            ...(options.q ? { search: options.q } : {}),
            ...(options.parent ? { parent: options.parent } : {}),
            ...(options.tag ? { tag: options.tag } : {}),
            ...(options.demo || options.notDemo ? { isDemoGroup: options.demo === true } : {}),
            limit: options.limit,
          });
          printRows(page.items.map(summaryRow), options.json);
        });
      },
    );

  subcommand(groups, 'show', 'show one user group, token included, by provided id or --team-id')
    .argument('[provided_id]', "the group's user_group_id")
    .addOption(new Option('--team-id <id>', 'look up by team_id instead').argParser(positiveInteger))
    .addOption(environmentOption().default('Customer'))
    .action(
      async (
        providedId: string | undefined,
        options: CommonOptions & { environment: Environment; teamId?: number },
      ) => {
        await withRuntime(options, async (runtime) => {
          const caller = await cliCaller(runtime, options.workspace, options.environment);
          const admin = runtime.services.userGroupAdmin;
          if (options.teamId === undefined && providedId === undefined)
            throw new Error('Give a provided id or --team-id.');
          const view =
            options.teamId !== undefined
              ? await admin.getUserGroup(caller, options.teamId)
              : await admin.getUserGroupByProvidedId(caller, providedId!);
          const group = presentAdminUserGroup(view);
          if (options.json) printJson(group);
          else process.stdout.write(`${JSON.stringify(group, null, 2)}\n`);
        });
      },
    );

  subcommand(groups, 'export', 'write user groups as JSON Lines (tokens only with --include-tokens)')
    .addOption(environmentOption('only this environment (default: both)'))
    .addOption(new Option('--include-tokens', "include each group's token in the clear"))
    .addOption(new Option('--output <file>', 'write here instead of stdout'))
    .action(
      async (options: CommonOptions & { environment?: Environment; includeTokens?: boolean; output?: string }) => {
        await withRuntime(options, async (runtime) => {
          const out = options.output
            ? await openOutput(options.output, options.includeTokens === true)
            : process.stdout;
          let count = 0;
          for (const environment of options.environment ? [options.environment] : ENVIRONMENTS) {
            const caller = await cliCaller(runtime, options.workspace, environment);
            for await (const group of runtime.services.userGroupTransfer.exportUserGroups(caller, {
              includeTokens: options.includeTokens === true,
            })) {
              if (!out.write(`${JSON.stringify(group)}\n`)) await once(out, 'drain');
              count += 1;
            }
          }
          if (out !== process.stdout)
            await new Promise<void>((resolve, reject) =>
              out.end((error?: Error | null) => (error ? reject(error) : resolve())),
            );
          process.stderr.write(`exported ${count} user groups\n`);
        });
      },
    );

  subcommand(groups, 'import', 'upsert user groups by provided id from JSON Lines; safe to rerun')
    .argument('<file>', 'JSON Lines file, or - for stdin')
    .addOption(environmentOption("put every group in this environment (default: each line's api_environment_tag)"))
    .addOption(new Option('--batch-size <n>', 'groups per transaction').argParser(positiveInteger).default(1000))
    .action(async (file: string, options: CommonOptions & { environment?: Environment; batchSize: number }) => {
      await withRuntime(options, async (runtime) => {
        // The line validator is compiled on load; only this command pays for it.
        const { readGroupLines } = await import('./group-import.reader.js');
        const caller = await cliCaller(runtime, options.workspace);
        const progress = progressReporter(file === '-' ? undefined : (await stat(file)).size);
        const summary = await runtime.services.userGroupTransfer.importUserGroups(
          caller,
          readGroupLines(file, progress.bytes),
          {
            ...(options.environment ? { environment: options.environment } : {}),
            batchSize: options.batchSize,
            ...(progress.lines ? { onProgress: progress.lines } : {}),
          },
        );
        progress.done();
        if (options.json) printJson(summary);
        else {
          process.stdout.write(
            `created ${summary.created}, updated ${summary.updated}, unchanged ${summary.unchanged}, rejected ${summary.rejected.length}\n`,
          );
          for (const { line, reason } of summary.rejected) process.stdout.write(`  line ${line}: ${reason}\n`);
        }
        if (summary.rejected.length > 0) process.exitCode = 2;
      });
    });

  addGroupsSyncCommand(groups);
  return groups;
}
