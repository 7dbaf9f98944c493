import { Command, InvalidArgumentError, Option } from 'commander';
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
    .addOption(
      new Option(
        '--person <person>',
        'only changes this person made through the console: "<issuer> <sub>", or <issuer>/<sub> when the sub has no "/"',
      ).argParser(personArgument),
    )
    .addOption(new Option('--since <time>', 'ISO time, inclusive'))
    .addOption(new Option('--until <time>', 'ISO time, exclusive'))
    .addOption(new Option('--limit <n>', 'at most this many (up to 1000)').argParser(pageLimit).default(50))
    .action(
      async (
        options: CommonOptions & {
          environment?: Environment;
          teamId?: number;
          action?: string;
          person?: { issuer: string; subject: string };
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
            ...(options.person ? { person: options.person } : {}),
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

/**
 * A person as the audit trail names them, (issuer, sub), in one argument: the two separated by white
 * space (as `audit list` prints a person's events), or by the last "/" (an issuer is a URL without white
 * space; a sub with a "/" in it needs the first form). Matched exactly, as the admin API's filter is.
 */
export function personArgument(value: string): { issuer: string; subject: string } {
  const text = value.trim();
  const space = text.search(/\s/);
  const [issuer, subject] =
    space > 0
      ? [text.slice(0, space), text.slice(space).trim()]
      : [text.slice(0, text.lastIndexOf('/')), text.slice(text.lastIndexOf('/') + 1)];
  if (!/^https?:\/\/[^/\s]/.test(issuer) || subject === '')
    throw new InvalidArgumentError(
      `"${value}" is not a person: give the identity provider's issuer and the person's sub, as "<issuer> <sub>" or <issuer>/<sub> (e.g. "https://idp.example.com/realms/staff 8f14e45f").`,
    );
  return { issuer, subject };
}
