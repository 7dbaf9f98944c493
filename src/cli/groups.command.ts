import { open, stat } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { once } from 'node:events';
import { Command, InvalidArgumentError, Option } from 'commander';
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
import {
  CARRIED_FIELDS,
  parseCarriedFields,
  type CarriedField,
} from '../domain/user-groups/user-group-transfer.rules.js';
import type { ImportVerification } from '../domain/user-groups/user-group-transfer.service.js';
import { importPosition, lineLabel, type ImportForm } from '../wire/user-group-import.presenter.js';

/** `--require-fields mapping,parent_user_group_id,…`: names checked here, so a typo is an error, not a no-op. */
function carriedFieldList(value: string): CarriedField[] {
  const parsed = parseCarriedFields(value);
  if ('error' in parsed) throw new InvalidArgumentError(parsed.error);
  return parsed.fields;
}

/** The verify report for people: one line per difference, never a token; items named as the file has them. */
function printVerification(result: ImportVerification, form: ImportForm): void {
  const at = (line: number) => lineLabel(line, form);
  process.stdout.write(
    `checked ${result.checked}, matched ${result.matched}, differ ${result.differences.length}, missing ${result.missing.length}, unreadable ${result.unreadable.length}\n`,
  );
  for (const { line, provided_id, fields } of result.differences)
    for (const difference of fields)
      process.stdout.write(
        difference.field === 'token'
          ? `  ${at(line)} (${provided_id}): token does not verify\n`
          : `  ${at(line)} (${provided_id}): ${difference.field} is ${JSON.stringify(difference.actual)}, the file has ${JSON.stringify(difference.expected)}\n`,
      );
  for (const { line, provided_id } of result.missing)
    process.stdout.write(`  ${at(line)} (${provided_id}): no such group in its environment\n`);
  for (const { line, reason } of result.unreadable) process.stdout.write(`  ${at(line)}: ${reason}\n`);
}

/**
 * The entries of a `--json` output that name an item by the domain's `line`, named as the file has
 * them: unchanged for NDJSON, `index` (from 0) for a JSON array, as the HTTP import's summary does.
 */
function positioned<T extends { line: number }>(entries: T[], form: ImportForm) {
  return entries.map(({ line, ...rest }) => ({ ...importPosition(line, form), ...rest }));
}

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

/**
 * An import whose file could not be read on (group-import.reader.ts's ImportFileStopped): the file
 * and the item, then what was written. An import writes batch by batch, so the batches before the
 * stop are kept and nothing from the stop on is written; a rerun leaves what is already imported
 * unchanged (upserts by provided_id), so the fixed file is imported again whole.
 */
function stoppedImport(error: Error, dryRun: boolean): Error {
  return new Error(
    dryRun
      ? `${error.message}\nThe dry run stopped there; nothing was written.`
      : `${error.message}\nThe import stopped there: the batches written before it are kept (see --batch-size), nothing from it on was written. Fix the file and run the import again; the lines already imported come out unchanged.`,
  );
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

  subcommand(groups, 'import', 'upsert user groups by provided id from NDJSON or a JSON array; safe to rerun')
    .argument('<file>', 'NDJSON (one group a line) or a JSON array of groups, or - for stdin')
    .addOption(environmentOption("put every group in this environment (default: each line's api_environment_tag)"))
    .addOption(new Option('--batch-size <n>', 'groups per transaction').argParser(positiveInteger).default(1000))
    .addOption(new Option('--dry-run', 'check every line and print the summary the import would give; write nothing'))
    .addOption(
      new Option(
        '--replace-tokens',
        "a line whose token differs from its group's current one rotates it (audited); otherwise that line is refused",
      ),
    )
    .addOption(
      new Option(
        '--supplement <file>',
        'group lines (NDJSON or a JSON array) keyed by provided_id whose fields (mapping, parent_user_group_id, is_demo_group, …) fill what a line lacks',
      ),
    )
    .addOption(
      new Option(
        '--require-fields <fields>',
        `reject a line lacking any of these (comma-separated: ${CARRIED_FIELDS.join(', ')})`,
      ).argParser(carriedFieldList),
    )
    .action(
      async (
        file: string,
        options: CommonOptions & {
          environment?: Environment;
          batchSize: number;
          dryRun?: boolean;
          replaceTokens?: boolean;
          supplement?: string;
          requireFields?: CarriedField[];
        },
      ) => {
        await withRuntime(options, async (runtime) => {
          // The line validator is compiled on load; only this command pays for it.
          const { ImportFile, ImportFileStopped, readSupplement } = await import('./group-import.reader.js');
          const caller = await cliCaller(runtime, options.workspace);
          const supplement = options.supplement ? await readSupplement(options.supplement) : undefined;
          const progress = progressReporter(file === '-' ? undefined : (await stat(file)).size);
          const input = new ImportFile(file, progress.bytes);
          const summary = await runtime.services.userGroupTransfer
            .importUserGroups(caller, input.lines(), {
              ...(options.environment ? { environment: options.environment } : {}),
              batchSize: options.batchSize,
              ...(supplement ? { supplement } : {}),
              ...(options.requireFields ? { requireFields: options.requireFields } : {}),
              ...(progress.lines ? { onProgress: progress.lines } : {}),
              dryRun: options.dryRun === true,
              replaceTokens: options.replaceTokens === true,
            })
            .catch((error: unknown) => {
              progress.done();
              throw error instanceof ImportFileStopped ? stoppedImport(error, options.dryRun === true) : error;
            });
          progress.done();
          const at = (line: number) => lineLabel(line, input.form);
          if (options.json) {
            const shown = {
              ...summary,
              rejected: positioned(summary.rejected, input.form),
              lacking: positioned(summary.lacking, input.form),
            };
            printJson(options.dryRun ? { dry_run: true, ...shown } : shown);
          } else {
            process.stdout.write(
              `${options.dryRun ? 'dry run, nothing written: would have ' : ''}created ${summary.created}, updated ${summary.updated}, unchanged ${summary.unchanged}, rejected ${summary.rejected.length}\n`,
            );
            for (const { line, reason } of summary.rejected) process.stdout.write(`  ${at(line)}: ${reason}\n`);
            if (summary.supplemented > 0) process.stdout.write(`supplemented ${summary.supplemented} lines\n`);
            if (summary.lacking_lines > 0) {
              const counts = CARRIED_FIELDS.flatMap((field) => {
                const count = summary.lacking_fields[field];
                return count
                  ? [`${field} ${count.lacked}${count.supplied ? ` (supplied ${count.supplied})` : ''}`]
                  : [];
              });
              process.stdout.write(`lacking ${summary.lacking_lines} lines: ${counts.join(', ')}\n`);
              for (const { line, provided_id, fields, supplied } of summary.lacking) {
                const kept = fields.filter((field) => !supplied.includes(field));
                const parts = [
                  ...(supplied.length > 0 ? [`the supplement gave ${supplied.join(', ')}`] : []),
                  ...(kept.length > 0 ? [`${kept.join(', ')} kept as here or the default`] : []),
                ];
                process.stdout.write(
                  `  ${at(line)} (${provided_id}): lacks ${fields.join(', ')}; ${parts.join('; ')}\n`,
                );
              }
              if (summary.lacking_lines > summary.lacking.length)
                process.stdout.write(`  … and ${summary.lacking_lines - summary.lacking.length} more lines\n`);
            }
          }
          if (summary.rejected.length > 0) process.exitCode = 2;
        });
      },
    );

  subcommand(
    groups,
    'verify-import',
    'compare every group an import wrote with its line; exit 2 on any difference (tokens never shown)',
  )
    .argument('<file>', 'the file that was imported (NDJSON or a JSON array), or - for stdin')
    .addOption(environmentOption("look in this environment (default: each line's api_environment_tag)"))
    .addOption(new Option('--supplement <file>', 'the supplement the import was given'))
    .action(async (file: string, options: CommonOptions & { environment?: Environment; supplement?: string }) => {
      await withRuntime(options, async (runtime) => {
        const { ImportFile, readSupplement } = await import('./group-import.reader.js');
        const caller = await cliCaller(runtime, options.workspace);
        const supplement = options.supplement ? await readSupplement(options.supplement) : undefined;
        const input = new ImportFile(file);
        const result = await runtime.services.userGroupTransfer.verifyImportedUserGroups(caller, input.lines(), {
          ...(options.environment ? { environment: options.environment } : {}),
          ...(supplement ? { supplement } : {}),
        });
        if (options.json)
          printJson({
            ...result,
            differences: positioned(result.differences, input.form),
            missing: positioned(result.missing, input.form),
            unreadable: positioned(result.unreadable, input.form),
          });
        else printVerification(result, input.form);
        if (result.differences.length + result.missing.length + result.unreadable.length > 0) process.exitCode = 2;
      });
    });

  addGroupsSyncCommand(groups);
  return groups;
}
