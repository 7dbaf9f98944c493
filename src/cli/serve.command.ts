import { Command, Option } from 'commander';
import { createRequire } from 'node:module';
import { openRuntime } from '../runtime.js';
import { firstStartBanner, startServer } from '../server.js';
import { databaseOption } from './context.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

function parseRateLimit(value: string): number | 'off' {
  if (value === 'off') return 'off';
  const perMinute = Number(value);
  if (!Number.isInteger(perMinute) || perMinute < 1) throw new Error('UGS_RATE_LIMIT must be "off" or a positive whole number of requests per minute.');
  return perMinute;
}

export function serveCommand(): Command {
  return new Command('serve')
    .description('start the HTTP server (applies migrations first)')
    .addOption(new Option('--port <port>', 'port to listen on').env('UGS_PORT').default(8080).argParser(Number))
    .addOption(new Option('--host <host>', 'address to bind').env('UGS_HOST').default('127.0.0.1'))
    .addOption(databaseOption())
    .addOption(new Option('--log-level <level>', 'fatal|error|warn|info|debug|trace').env('UGS_LOG_LEVEL').default('info'))
    .addOption(new Option('--rate-limit <perMinute>', 'requests per minute per API token, or "off"').env('UGS_RATE_LIMIT').default('100000'))
    .action(async (options: { port: number; host: string; database: string; logLevel: string; rateLimit: string }) => {
      const runtime = await openRuntime({ databaseUrl: options.database, encryptionKey: process.env.UGS_ENCRYPTION_KEY });
      const server = await startServer(runtime, {
        port: options.port,
        host: options.host,
        logLevel: options.logLevel,
        rateLimitPerMinute: parseRateLimit(options.rateLimit),
        version,
        drainTimeoutMs: 10_000,
      }).catch(async (error: unknown) => {
        await runtime.close();
        throw error;
      });
      if (server.firstStartTokens) {
        const address = server.app.server.address();
        const port = typeof address === 'object' && address ? address.port : options.port;
        process.stdout.write(firstStartBanner(server.firstStartTokens, `http://${options.host}:${port}`));
      }
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        process.once(signal, () => {
          server.app.log.info({ signal }, 'draining before exit');
          server.stop().then(
            () => process.exit(0),
            (error: unknown) => {
              server.app.log.error({ err: error }, 'shutdown failed');
              process.exit(1);
            },
          );
        });
      }
    });
}

export function migrateCommand(): Command {
  return new Command('migrate')
    .description('apply pending schema migrations and create workspace "default" if missing')
    .addOption(databaseOption())
    .action(async (options: { database: string }) => {
      const runtime = await openRuntime({ databaseUrl: options.database, encryptionKey: process.env.UGS_ENCRYPTION_KEY });
      await runtime.close();
      process.stdout.write('migrations applied\n');
    });
}
