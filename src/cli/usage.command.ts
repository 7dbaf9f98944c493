import { Command, Option } from 'commander';
import type { Environment } from '../domain/tenancy.js';
import { USAGE_METRICS } from '../domain/usage/usage.records.js';
import {
  cliCaller,
  databaseOption,
  environmentOption,
  jsonOption,
  positiveInteger,
  printJson,
  printRows,
  withRuntime,
  workspaceOption,
  type CommonOptions,
} from './context.js';

interface UsageOptions extends CommonOptions {
  environment?: Environment;
  group?: string;
  since?: string;
  until?: string;
  metric?: string;
  limit?: number;
}

/**
 * `ugs usage`: the busiest groups of an environment, or with --group one group's days (docs/api.md#usage-per-group).
 * What the serving processes counted in the last few seconds may not be written yet.
 */
export function usageCommand(): Command {
  return new Command('usage')
    .description("usage per group: the busiest groups, or one group's days (--group)")
    .addOption(new Option('--group <user_group_id>', "one group's counts per day instead of the busiest groups"))
    .addOption(new Option('--since <date>', 'first UTC day, e.g. 2026-11-01 (default: 29 days before --until)'))
    .addOption(new Option('--until <date>', 'last UTC day (default: today)'))
    .addOption(
      new Option('--metric <metric>', 'what the busiest are busiest at (default: verifications)').choices(
        USAGE_METRICS,
      ),
    )
    .addOption(new Option('--limit <n>', 'how many groups, up to 100 (default: 10)').argParser(positiveInteger))
    .addOption(environmentOption('the environment (default: Customer)'))
    .addOption(workspaceOption())
    .addOption(jsonOption())
    .addOption(databaseOption())
    .action(async (options: UsageOptions) => {
      await withRuntime(options, async (runtime) => {
        const caller = await cliCaller(runtime, options.workspace, options.environment);
        const range = {
          ...(options.since === undefined ? {} : { since: options.since }),
          ...(options.until === undefined ? {} : { until: options.until }),
        };
        if (options.group !== undefined) {
          const group = await runtime.services.userGroupAdmin.getUserGroupByProvidedId(caller, options.group);
          const series = await runtime.services.usage.series(caller, { teamId: group.teamId, ...range });
          const days = series.days.map((day) => ({
            day: day.day,
            embed_tokens_minted: day.embedTokensMinted,
            verifications: day.verifications,
            reads: day.reads,
          }));
          if (options.json)
            printJson({
              team_id: series.teamId,
              user_group_id: series.providedId,
              since: series.since,
              until: series.until,
              days,
            });
          else printRows(days, false);
          return;
        }
        const top = await runtime.services.usage.top(caller, {
          ...range,
          ...(options.metric === undefined ? {} : { metric: options.metric }),
          ...(options.limit === undefined ? {} : { limit: options.limit }),
        });
        printRows(
          top.groups.map((group) => ({
            team_id: group.teamId,
            user_group_id: group.providedId,
            name: group.name,
            embed_tokens_minted: group.embedTokensMinted,
            verifications: group.verifications,
            reads: group.reads,
          })),
          options.json,
        );
      });
    });
}
