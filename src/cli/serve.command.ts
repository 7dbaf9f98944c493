import cluster from 'node:cluster';
import { Command } from 'commander';
import { openRuntime } from '../runtime.js';
import { databaseOption } from './context.js';
import { rateLimitOf, serveCommandWithOptions, type ServeFlags } from './serve-options.js';
import { serveInThisProcess } from './serve-process.js';
import { superviseWorkers } from './worker-supervisor.js';

/** `ugs serve`: one process serving, or the primary of a cluster supervising its workers. */
export function serveCommand(): Command {
  return serveCommandWithOptions().action(async (flags: ServeFlags) => {
    const rateLimit = rateLimitOf(flags);
    if (flags.workers > 1 && cluster.isPrimary) await superviseWorkers(flags, rateLimit);
    else await serveInThisProcess(flags, rateLimit);
  });
}

export function migrateCommand(): Command {
  return new Command('migrate')
    .description('apply pending schema migrations and create workspace "default" if missing')
    .addOption(databaseOption())
    .action(async (options: { database: string }) => {
      const runtime = await openRuntime({
        databaseUrl: options.database,
        encryptionKey: process.env.UGS_ENCRYPTION_KEY,
      });
      await runtime.close();
      process.stdout.write('migrations applied\n');
    });
}
