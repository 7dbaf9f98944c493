import { Command, Option } from 'commander';
import type { ApiTokenRecord } from '../domain/api-tokens/api-token.records.js';
import { SCOPES, type Environment, type Scope } from '../domain/tenancy.js';
import {
  parseBurst,
  parseRate,
  rateLimitLabel,
  rateLimitPolicy,
  updatedRateLimit,
  type Rate,
} from '../rate-limit/rate-limit-setting.js';
import {
  cliCaller,
  environmentOption,
  optionParser,
  positiveInteger,
  printJson,
  printRows,
  subcommand,
  withRuntime,
  type CommonOptions,
} from './context.js';

const describe = (token: ApiTokenRecord, workspace: string) => ({
  id: token.id,
  name: token.name,
  scope: token.scope,
  environment: token.environment,
  workspace,
  rate_limit: token.rateLimit && { per_second: token.rateLimit.perSecond, burst: token.rateLimit.burst },
  created_at: token.createdAt,
  last_used_at: token.lastUsedAt,
});

const burstOption = () =>
  new Option('--rate-limit-burst <n>', 'requests it may make at once (default: the <n> of --rate-limit)').argParser(
    optionParser(parseBurst),
  );

interface RateLimitFlags {
  rateLimitBurst?: number;
}

export function tokensCommand(): Command {
  const tokens = new Command('tokens').description('manage API tokens');

  subcommand(tokens, 'create', 'create an API token and print its secret (shown only this once)')
    .addOption(environmentOption().makeOptionMandatory())
    .addOption(new Option('--scope <scope>', 'what the token may do').choices(SCOPES).makeOptionMandatory())
    .addOption(new Option('--name <label>', 'label shown in listings and the audit trail'))
    .addOption(
      new Option('--rate-limit <rate>', "its own rate limit, <n>/s or <n>/min (default: the server's)").argParser(
        optionParser(parseRate),
      ),
    )
    .addOption(burstOption())
    .action(
      async (
        options: CommonOptions &
          RateLimitFlags & { environment: Environment; scope: Scope; name?: string; rateLimit?: Rate },
      ) => {
        if (options.rateLimitBurst !== undefined && options.rateLimit === undefined)
          throw new Error('--rate-limit-burst needs --rate-limit.');
        await withRuntime(options, async (runtime) => {
          const caller = await cliCaller(runtime, options.workspace, options.environment);
          const name = options.name ?? `${options.scope} token (${options.environment})`;
          const rateLimit = options.rateLimit && rateLimitPolicy(options.rateLimit, options.rateLimitBurst);
          const { record, secret } = await runtime.services.apiTokens.createApiToken(caller, {
            name,
            scope: options.scope,
            environment: options.environment,
            rateLimit,
          });
          if (options.json) {
            printJson({
              id: record.id,
              name: record.name,
              scope: record.scope,
              environment: record.environment,
              workspace: options.workspace,
              token: secret,
            });
          } else {
            process.stdout.write(`${secret}\n`);
          }
        });
      },
    );

  subcommand(tokens, 'list', 'list the live API tokens of a workspace (never their secrets)').action(
    async (options: CommonOptions) => {
      await withRuntime(options, async (runtime) => {
        const caller = await cliCaller(runtime, options.workspace);
        printRows(
          (await runtime.services.apiTokens.listApiTokens(caller, 'workspace')).map((token) =>
            describe(token, options.workspace),
          ),
          options.json,
          {
            rate_limit: (rateLimit) =>
              rateLimitLabel(rateLimit && { perSecond: rateLimit.per_second, burst: rateLimit.burst }),
          },
        );
      });
    },
  );

  subcommand(
    tokens,
    'update',
    "change an API token's rate limit; a running server applies it from the token's next request",
  )
    .argument('<id>', 'API token id (see `ugs tokens list`)', positiveInteger)
    .addOption(
      new Option(
        '--rate-limit <rate>',
        '<n>/s or <n>/min (the token keeps its burst), or "default" for the server\'s',
      ).argParser(optionParser((text): Rate | 'default' => (text.trim() === 'default' ? 'default' : parseRate(text)))),
    )
    .addOption(
      new Option('--rate-limit-burst <n>', 'requests it may make at once (the token keeps its rate)').argParser(
        optionParser(parseBurst),
      ),
    )
    .action(async (id: number, options: CommonOptions & RateLimitFlags & { rateLimit?: Rate | 'default' }) => {
      if (options.rateLimit === 'default' && options.rateLimitBurst !== undefined)
        throw new Error('--rate-limit-burst goes with a rate, not with "default".');
      if (options.rateLimit === undefined && options.rateLimitBurst === undefined)
        throw new Error('Give --rate-limit, --rate-limit-burst or both.');
      await withRuntime(options, async (runtime) => {
        const caller = await cliCaller(runtime, options.workspace);
        const rate = options.rateLimit;
        const current = async () => {
          const token = (await runtime.services.apiTokens.listApiTokens(caller, 'workspace')).find(
            (candidate) => candidate.id === id,
          );
          return token?.rateLimit ?? null;
        };
        const rateLimit = rate === 'default' ? null : updatedRateLimit(await current(), rate, options.rateLimitBurst);
        const updated = await runtime.services.apiTokens.updateApiTokenRateLimit(caller, id, rateLimit);
        if (options.json) printJson(describe(updated, options.workspace));
        else process.stdout.write(`API token ${updated.id} (${updated.name}): ${rateLimitLabel(updated.rateLimit)}\n`);
      });
    });

  subcommand(tokens, 'revoke', 'revoke an API token; a running server refuses it from its next request')
    .argument('<id>', 'API token id (see `ugs tokens list`)', positiveInteger)
    .action(async (id: number, options: CommonOptions) => {
      await withRuntime(options, async (runtime) => {
        const revoked = await runtime.services.apiTokens.revokeApiToken(
          await cliCaller(runtime, options.workspace),
          id,
        );
        if (options.json) printJson({ ...describe(revoked, options.workspace), revoked_at: revoked.revokedAt });
        else process.stdout.write(`revoked API token ${revoked.id} (${revoked.name})\n`);
      });
    });

  return tokens;
}
