import { Command } from 'commander';
import { toSigningKey } from '../wire/signing-key.presenter.js';
import { cliCaller, printJson, printRows, subcommand, withRuntime, type CommonOptions } from './context.js';

/** `ugs signing-keys list|rotate`: the keys that sign a workspace's embed tokens (SPEC §10). */
export function signingKeysCommand(): Command {
  const keys = new Command('signing-keys').description("manage the keys that sign a workspace's embed tokens");

  subcommand(keys, 'list', 'list the published signing keys, newest (the current one) first').action(
    async (options: CommonOptions) => {
      await withRuntime(options, async (runtime) => {
        printRows(
          (await runtime.services.signingKeys.list(await cliCaller(runtime, options.workspace))).map(toSigningKey),
          options.json,
        );
      });
    },
  );

  subcommand(
    keys,
    'rotate',
    'sign with a new key from now on; the old one stays published until its tokens have expired',
  ).action(async (options: CommonOptions) => {
    await withRuntime(options, async (runtime) => {
      const { current, retired } = await runtime.services.signingKeys.rotate(
        await cliCaller(runtime, options.workspace),
      );
      if (options.json) printJson({ current: toSigningKey(current), retired: retired && toSigningKey(retired) });
      else {
        const old = retired ? `; ${retired.kid} stays published until ${retired.publishedUntil}` : '';
        process.stdout.write(`signing with ${current.kid} from now on${old}\n`);
      }
    });
  });

  return keys;
}
