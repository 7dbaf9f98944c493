import { usageCommand } from './usage.command.js';
import { Command, CommanderError } from 'commander';
import { isAppError } from '../domain/errors.js';
import { auditCommand } from './audit.command.js';
import { backupCommand, restoreCommand } from './backup.command.js';
import { dataSourcesCommand, schemasCommand, workspacesCommand } from './catalog.command.js';
import { groupsCommand } from './groups.command.js';
import { keysCommand } from './keys.command.js';
import { PACKAGE_VERSION } from './package-version.js';
import { signingKeysCommand } from './signing-keys.command.js';
import { embedTokensCommand } from './embed-tokens.command.js';
import { migrateCommand, serveCommand } from './serve.command.js';
import { tokensCommand } from './tokens.command.js';
import { webhooksCommand } from './webhooks.command.js';

export function buildProgram(): Command {
  const program = new Command('ugs')
    .description('User Group Service: serve the API and administer its database')
    .version(PACKAGE_VERSION, '-V, --version', 'print the version and exit')
    .showHelpAfterError()
    .exitOverride();
  for (const command of [
    serveCommand(),
    migrateCommand(),
    tokensCommand(),
    schemasCommand(),
    dataSourcesCommand(),
    workspacesCommand(),
    groupsCommand(),
    auditCommand(),
    keysCommand(),
    signingKeysCommand(),
    embedTokensCommand(),
    webhooksCommand(),
    usageCommand(),
    backupCommand(),
    restoreCommand(),
  ]) {
    program.addCommand(command);
  }
  // Subcommands inherit exitOverride only when set on each; usage errors must not print a stack.
  const applyExitOverride = (command: Command) => {
    command.exitOverride();
    command.commands.forEach(applyExitOverride);
  };
  applyExitOverride(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has printed help or the usage error itself.
      process.exitCode = error.exitCode;
      return;
    }
    process.stderr.write(
      `ugs: ${isAppError(error) ? `${error.message} (${error.code})` : error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exitCode = 1;
    // A cluster worker's channel to its primary would keep it alive; without it, the process ends
    // and the primary learns the worker failed.
    if (process.connected) process.disconnect();
  }
}
