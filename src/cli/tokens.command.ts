import { Command, Option } from 'commander';
import type { ApiTokenRecord } from '../domain/models.js';
import { SCOPES, type Environment, type Scope } from '../domain/tenancy.js';
import { cliCaller, environmentOption, positiveInteger, printJson, printRows, subcommand, withRuntime, type CommonOptions } from './context.js';

const describe = (token: ApiTokenRecord, workspace: string) => ({
  id: token.id,
  name: token.name,
  scope: token.scope,
  environment: token.environment,
  workspace,
  created_at: token.createdAt,
  last_used_at: token.lastUsedAt,
});

export function tokensCommand(): Command {
  const tokens = new Command('tokens').description('manage API tokens');

  subcommand(tokens, 'create', 'create an API token and print its secret (shown only this once)')
    .addOption(environmentOption().makeOptionMandatory())
    .addOption(new Option('--scope <scope>', 'what the token may do').choices(SCOPES).makeOptionMandatory())
    .addOption(new Option('--name <label>', 'label shown in listings and the audit trail'))
    .action(async (options: CommonOptions & { environment: Environment; scope: Scope; name?: string }) => {
      await withRuntime(options, async (runtime) => {
        const caller = await cliCaller(runtime, options.workspace, options.environment);
        const name = options.name ?? `${options.scope} token (${options.environment})`;
        const { record, secret } = await runtime.services.apiTokens.createApiToken(caller, { name, scope: options.scope, environment: options.environment });
        if (options.json) {
          printJson({ id: record.id, name: record.name, scope: record.scope, environment: record.environment, workspace: options.workspace, token: secret });
        } else {
          process.stdout.write(`${secret}\n`);
        }
      });
    });

  subcommand(tokens, 'list', 'list the live API tokens of a workspace (never their secrets)').action(async (options: CommonOptions) => {
    await withRuntime(options, async (runtime) => {
      const caller = await cliCaller(runtime, options.workspace);
      printRows((await runtime.services.apiTokens.listApiTokens(caller, 'workspace')).map((token) => describe(token, options.workspace)), options.json);
    });
  });

  subcommand(tokens, 'revoke', 'revoke an API token; a running server refuses it from its next request')
    .argument('<id>', 'API token id (see `ugs tokens list`)', positiveInteger)
    .action(async (id: number, options: CommonOptions) => {
      await withRuntime(options, async (runtime) => {
        const revoked = await runtime.services.apiTokens.revokeApiToken(await cliCaller(runtime, options.workspace), id);
        if (options.json) printJson({ ...describe(revoked, options.workspace), revoked_at: revoked.revokedAt });
        else process.stdout.write(`revoked API token ${revoked.id} (${revoked.name})\n`);
      });
    });

  return tokens;
}
