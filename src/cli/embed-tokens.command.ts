import { Command } from 'commander';
import type { Environment } from '../domain/tenancy.js';
import { cliCaller, environmentOption, printJson, subcommand, withRuntime, type CommonOptions } from './context.js';

type RevokeOptions = CommonOptions & { environment: Environment; group?: string; token?: string };

/** `ugs embed-tokens revoke`: take embed tokens back before they expire (docs/api.md, "Revoking embed tokens"). */
export function embedTokensCommand(): Command {
  const embedTokens = new Command('embed-tokens').description('manage the embed tokens minted for user groups');

  subcommand(
    embedTokens,
    'revoke',
    'revoke one embed token (--token) or every current one of a group (--group): refused online at once, offline within the verifiers’ staleness bound',
  )
    .addOption(environmentOption('the environment of the group or token').default('Customer' satisfies Environment))
    .option('--group <user_group_id>', 'revoke every embed token minted for this group until now')
    .option('--token <embed_token>', 'revoke this embed token, until it expires')
    .action(async (options: RevokeOptions) => {
      if ((options.group === undefined) === (options.token === undefined))
        throw new Error('Give --group or --token (one of them).');
      await withRuntime(options, async (runtime) => {
        const caller = await cliCaller(runtime, options.workspace, options.environment);
        const revocations = runtime.services.embedTokenRevocations;
        const revoked =
          options.token !== undefined
            ? await revocations.revokeToken(caller, options.token)
            : await revocations.revokeGroup(caller, options.group!);
        if (options.json) {
          printJson({ user_group_id: revoked.userGroup.providedId, jti: revoked.jti });
          return;
        }
        process.stdout.write(
          revoked.jti === null
            ? `revoked every embed token of ${revoked.userGroup.providedId} minted until now\n`
            : `revoked embed token ${revoked.jti} of ${revoked.userGroup.providedId}\n`,
        );
      });
    });

  return embedTokens;
}
