import { Command, Option } from 'commander';
import type { Environment } from '../domain/tenancy.js';
import { toSigningKey } from '../wire/signing-key.presenter.js';
import {
  cliCaller,
  environmentOption,
  printJson,
  printRows,
  subcommand,
  withRuntime,
  type CommonOptions,
} from './context.js';

type IssuerOptions = CommonOptions & { environment: Environment };

/** `ugs signing-keys list|rotate`: the keys that sign an environment's embed tokens (docs/api.md#embed-tokens), one issuer each. */
export function signingKeysCommand(): Command {
  const keys = new Command('signing-keys').description(
    "manage the keys that sign a workspace's embed tokens (each environment has its own)",
  );
  const issuerOption = () =>
    environmentOption('the environment whose issuer the keys sign for').default('Customer' satisfies Environment);

  subcommand(keys, 'list', 'list the published signing keys, newest (the current one) first')
    .addOption(issuerOption())
    .action(async (options: IssuerOptions) => {
      await withRuntime(options, async (runtime) => {
        const caller = await cliCaller(runtime, options.workspace, options.environment);
        printRows((await runtime.services.signingKeys.list(caller)).map(toSigningKey), options.json);
      });
    });

  subcommand(
    keys,
    'rotate',
    'sign with a new key from now on; the old one stays published until its tokens have expired',
  )
    .addOption(issuerOption())
    .addOption(
      new Option(
        '--force',
        'for a leaked key: rotate even when the most keys are published, dropping the oldest (its tokens stop verifying)',
      ),
    )
    .action(async (options: IssuerOptions & { force?: boolean }) => {
      await withRuntime(options, async (runtime) => {
        const caller = await cliCaller(runtime, options.workspace, options.environment);
        const { current, retired, dropped } = await runtime.services.signingKeys.rotate(caller, {
          force: options.force ?? false,
        });
        if (options.json) {
          printJson({
            current: toSigningKey(current),
            retired: retired && toSigningKey(retired),
            dropped: dropped.map(toSigningKey),
          });
          return;
        }
        const old = retired ? `; ${retired.kid} stays published until ${retired.publishedUntil}` : '';
        process.stdout.write(`signing with ${current.kid} from now on${old}\n`);
        for (const key of dropped) process.stdout.write(`dropped ${key.kid}: the tokens it signed no longer verify\n`);
      });
    });

  return keys;
}
