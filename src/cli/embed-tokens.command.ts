import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import type { Environment } from '../domain/tenancy.js';
import { cliCaller, environmentOption, printJson, subcommand, withRuntime, type CommonOptions } from './context.js';

type IssuerOptions = CommonOptions & { environment: Environment };
type RevokeOptions = IssuerOptions & { group?: string; token?: string };

/** The token argument, or stdin for `-` (a token on the command line is seen by `ps`). */
const tokenFrom = (argument: string) => (argument === '-' ? readFileSync(0, 'utf8').trim() : argument);

/**
 * `ugs embed-tokens revoke|introspect|refresh`: the embed-token lifecycle beyond minting
 * (docs/cli.md#embed-tokens-introspect-and-refresh, docs/api.md#revoking-embed-tokens), for an operator at
 * the database: take tokens back, what a token claims and whether it is valid now, and a session's refresh.
 */
export function embedTokensCommand(): Command {
  const tokens = new Command('embed-tokens').description('revoke, inspect and refresh embed tokens');
  const issuerOption = () =>
    environmentOption('the environment whose issuer to check the token at').default('Customer' satisfies Environment);

  subcommand(
    tokens,
    'introspect',
    'RFC 7662: {"active":false} unless the token is valid now at the issuer, else its claims (consumes a single-use token)',
  )
    .argument('<token>', 'the embed token, or - to read it from stdin')
    .addOption(issuerOption())
    .action(async (token: string, options: IssuerOptions) => {
      await withRuntime(options, async (runtime) => {
        const caller = await cliCaller(runtime, options.workspace, options.environment);
        const answer = await runtime.services.embedTokenLifecycle.introspect(
          caller,
          { workspace: options.workspace, environment: options.environment },
          tokenFrom(token),
        );
        if (options.json) printJson(answer);
        else if (!answer.active) process.stdout.write('inactive\n');
        else
          process.stdout.write(
            `active: ${answer.sub} (team ${answer.ugs.team_id}), audience ${answer.aud}, expires ${new Date(answer.exp * 1000).toISOString()}${answer.ugs.single_use ? ', single use (now consumed)' : ''}\n`,
          );
      });
    });

  subcommand(
    tokens,
    'refresh',
    "a fresh token of a session's live token: the group as it is now, a new expiry within the session",
    { workspace: false },
  )
    .argument('<token>', 'the embed token, or - to read it from stdin')
    .action(async (token: string, options: Omit<CommonOptions, 'workspace'>) => {
      await withRuntime(options, async (runtime) => {
        // The operator's own refresh: no Origin, and no session rate limit (that guards the public route).
        const refreshed = await runtime.services.embedTokenLifecycle.refresh(
          tokenFrom(token),
          undefined,
          async () => {},
        );
        if (options.json)
          printJson({
            embed_token: refreshed.embedToken,
            expires_at: refreshed.expiresAt,
            session_ends_at: refreshed.sessionEndsAt,
          });
        else process.stdout.write(`${refreshed.embedToken}\n`);
      });
    });

  subcommand(
    tokens,
    'revoke',
    'revoke one embed token (--token) or every current one of a group (--group): refused online at once, offline within the verifiers’ staleness bound',
  )
    .addOption(issuerOption())
    .option('--group <user_group_id>', 'revoke every embed token minted for this group until now')
    .option('--token <embed_token>', 'revoke this embed token, until it expires (- reads it from stdin)')
    .action(async (options: RevokeOptions) => {
      if ((options.group === undefined) === (options.token === undefined))
        throw new Error('Give --group or --token (one of them).');
      await withRuntime(options, async (runtime) => {
        const caller = await cliCaller(runtime, options.workspace, options.environment);
        const revocations = runtime.services.embedTokenRevocations;
        const revoked =
          options.token !== undefined
            ? await revocations.revokeToken(caller, tokenFrom(options.token))
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

  return tokens;
}
