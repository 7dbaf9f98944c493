import { Command, Option } from 'commander';
import type { Environment } from '../domain/tenancy.js';
import {
  cliCaller,
  environmentOption,
  pageLimit,
  positiveInteger,
  printRows,
  subcommand,
  withRuntime,
  type CommonOptions,
} from './context.js';

export function auditCommand(): Command {
  const audit = new Command('audit').description('read the audit trail');

  subcommand(audit, 'list', 'list audit events, newest first')
    .addOption(environmentOption('only this environment (default: both)'))
    .addOption(new Option('--team-id <id>', 'only events of this group').argParser(positiveInteger))
    .addOption(new Option('--action <action>', 'e.g. user_group.created'))
    .addOption(new Option('--since <time>', 'ISO time, inclusive'))
    .addOption(new Option('--until <time>', 'ISO time, exclusive'))
    .addOption(new Option('--limit <n>', 'at most this many (up to 1000)').argParser(pageLimit).default(50))
    .action(
      async (
        options: CommonOptions & {
          environment?: Environment;
          teamId?: number;
          action?: string;
          since?: string;
          until?: string;
          limit: number;
        },
      ) => {
        await withRuntime(options, async (runtime) => {
          const caller = await cliCaller(runtime, options.workspace);
          const page = await runtime.services.audit.listAuditEvents(caller, {
            ...(options.environment ? { environment: options.environment } : {}),
            ...(options.teamId !== undefined ? { teamId: options.teamId } : {}),
            ...(options.action ? { action: options.action } : {}),
            ...(options.since ? { since: isoTime(options.since) } : {}),
            ...(options.until ? { until: isoTime(options.until) } : {}),
            limit: options.limit,
          });
          printRows(
            page.items.map((event) => ({
              id: event.id,
              at: event.at,
              environment: event.environment,
              actor:
                event.actor.type === 'api_token'
                  ? `api_token:${event.actor.apiTokenId} (${event.actor.name})`
                  : event.actor.type === 'person'
                    ? `person:${event.actor.issuer} ${event.actor.subject} (${event.actor.email ?? 'no email'})`
                    : 'cli',
              action: event.action,
              team_id: event.teamId,
              provided_id: event.providedId,
              ...(options.json ? { changes: event.changes, request_id: event.requestId } : {}),
            })),
            options.json,
          );
        });
      },
    );

  return audit;
}

function isoTime(value: string): string {
  const time = new Date(value);
  if (Number.isNaN(time.getTime()))
    throw new Error(`"${value}" is not a time (use ISO 8601, e.g. 2026-11-22T10:00:00Z).`);
  return time.toISOString();
}
