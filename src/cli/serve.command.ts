import cluster from 'node:cluster';
import { once } from 'node:events';
import { Command, Option } from 'commander';
import type { Logger } from 'pino';
import { createLogger } from '../logger.js';
import { DEFAULT_SERVER_TIMEOUTS, type ServerTimeouts } from '../config/server-timeouts.js';
import type { RateLimitOption } from '../rate-limit/rate-limit-setting.js';
import { createWorkerRateLimiter, serveRateLimitsToWorkers } from '../rate-limit/cluster-rate-limiter.js';
import { createLocalRateLimiter } from '../rate-limit/rate-limiter.js';
import {
  DEFAULT_RATE_LIMIT,
  parseBurst,
  parseRate,
  parseRateSetting,
  rateLimitPolicy,
  type Rate,
} from '../rate-limit/rate-limit-setting.js';
import type { RateLimitPolicy } from '../rate-limit/token-bucket.js';
import { openRuntime, type Runtime } from '../runtime.js';
import { parseDatabaseUrl } from '../config/database-url.js';
import type { ServeOptions } from '../server.js';
import { databaseOption, optionParser, positiveInteger } from './context.js';
import { PACKAGE_VERSION } from './package-version.js';
import {
  addWebhookWorkerOptions,
  allowPrivateWebhooks,
  webhookWorkerSettings,
  type WebhookFlags,
} from './webhook-options.js';

interface ServeFlags extends WebhookFlags {
  port: number;
  host: string;
  database: string;
  logLevel: string;
  rateLimit: Rate | 'off';
  rateLimitBurst?: number;
  workers: number;
  dbPoolSize: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  idleTimeoutMs: number;
  drainTimeoutMs: number;
  publicUrl?: string;
}

/** `--public-url`: an http(s) URL, kept without a trailing slash (issuers append `/w/<workspace>`). */
function parsePublicUrl(text: string): string {
  const url = new URL(text);
  if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash) {
    throw new Error('must be an http(s) URL without a query or fragment, e.g. https://ugs.example.com');
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * A single process keeps the buckets itself; a cluster worker asks the primary, which keeps those
 * of the whole server, and falls back to buckets of its own when the primary does not answer.
 */
function rateLimitOption(setting: RateLimitPolicy | 'off'): RateLimitOption {
  if (setting === 'off') return 'off';
  const local = createLocalRateLimiter();
  return { limiter: cluster.worker ? createWorkerRateLimiter(local, cluster.worker) : local, defaultPolicy: setting };
}

const DRAIN_TIMEOUT_MS = 10_000;

/** How much longer than a worker's drain the primary waits for it before killing it. */
const WORKER_EXIT_MARGIN_MS = 5_000;

function serverTimeouts(flags: ServeFlags): ServerTimeouts {
  if (flags.headersTimeoutMs > flags.requestTimeoutMs) {
    throw new Error(
      '--headers-timeout-ms (UGS_HEADERS_TIMEOUT_MS) must not be longer than --request-timeout-ms (UGS_REQUEST_TIMEOUT_MS): the headers are part of the request.',
    );
  }
  return {
    headersMs: flags.headersTimeoutMs,
    requestMs: flags.requestTimeoutMs,
    keepAliveMs: flags.keepAliveTimeoutMs,
    idleMs: flags.idleTimeoutMs,
  };
}

/** A duration in milliseconds, from a flag or its UGS_ variable. */
const millisecondsOption = (flag: string, variable: string, fallback: number, description: string) =>
  new Option(`--${flag} <ms>`, description).env(variable).default(fallback).argParser(positiveInteger);

function serveOptions(flags: ServeFlags, rateLimit: RateLimitPolicy | 'off'): ServeOptions {
  return {
    port: flags.port,
    host: flags.host,
    logLevel: flags.logLevel,
    rateLimit: rateLimitOption(rateLimit),
    version: PACKAGE_VERSION,
    drainTimeoutMs: flags.drainTimeoutMs,
    timeouts: serverTimeouts(flags),
    // In a cluster the primary issues them once every worker listens.
    issueFirstStartTokens: cluster.isPrimary,
    webhooks: webhookWorkerSettings(flags),
  };
}

/** The issuer base: --public-url, else where this process listens (the port once it is bound). */
function publicUrlOf(flags: ServeFlags, boundPort: () => number): () => string {
  return () => flags.publicUrl ?? `http://${flags.host}:${boundPort()}`;
}

function openFor(flags: ServeFlags, publicUrl: () => string) {
  const log = createLogger(flags.logLevel);
  return openRuntime({
    publicUrl,
    databaseUrl: flags.database,
    encryptionKey: process.env.UGS_ENCRYPTION_KEY,
    poolSize: flags.dbPoolSize,
    allowPrivateWebhooks: allowPrivateWebhooks(flags),
    warn: (message) => log.warn(message),
    onKeyReload: (event) => {
      if ('error' in event)
        log.error({ err: event.error }, 'the encryption key file could not be reloaded; the previous keys stay in use');
      else log.info({ keyId: event.keyId, keyIds: event.keyIds }, 'encryption keys reloaded');
    },
  });
}

/**
 * Once per server (the primary, or the only process): what about its setup an operator should fix.
 * On PostgreSQL several instances may share the database, and each one without --public-url issues
 * embed tokens under its own address, which the others then refuse (SPEC §10).
 */
async function warnAboutSetup(flags: ServeFlags, runtime: Runtime, log: Logger): Promise<void> {
  for (const warning of await runtime.store.serverWarnings()) log.warn(warning);
  if (parseDatabaseUrl(flags.database).engine === 'postgres' && flags.publicUrl === undefined)
    log.warn(
      "no --public-url (UGS_PUBLIC_URL) on PostgreSQL: embed tokens are issued under this instance's own address, so another instance sharing the database refuses them; set the URL clients reach the service at",
    );
}

/**
 * SIGTERM or SIGINT drains and exits. Later signals change nothing (the drain is bounded anyway):
 * Ctrl-C reaches every process of the terminal's process group, and `npm start` forwards it too, so
 * one process often gets the same signal twice.
 */
function onStopSignal(stop: (signal: NodeJS.Signals) => Promise<void>): void {
  let stopping: Promise<void> | undefined;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      stopping ??= stop(signal).then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
}

/** One process serving: the whole server, or one worker of a cluster. */
async function serveInThisProcess(flags: ServeFlags, rateLimit: RateLimitPolicy | 'off'): Promise<void> {
  // Loaded here, not at the top: every other command would otherwise pay for loading the HTTP stack.
  const { firstStartBanner, startServer } = await import('../server.js');
  // Before the database opens: a bad flag must not leave a pool open behind its error.
  const options = serveOptions(flags, rateLimit);
  let port = flags.port;
  const runtime = await openFor(
    flags,
    publicUrlOf(flags, () => port),
  );
  if (!cluster.worker) await warnAboutSetup(flags, runtime, createLogger(flags.logLevel));
  const starting = startServer(runtime, options).catch(async (error: unknown) => {
    await runtime.close();
    throw error;
  });
  // Before the start finishes: the server answers as soon as it listens, and a signal in the instant
  // before it is ready must drain it, not kill it. The stop waits for the start.
  onStopSignal(async (signal) => {
    const server = await starting;
    server.app.log.info({ signal }, 'draining before exit');
    await server.stop().catch((error: unknown) => {
      server.app.log.error({ err: error }, 'shutdown failed');
      throw error;
    });
  });
  const server = await starting;
  const address = server.app.server.address();
  if (typeof address === 'object' && address) port = address.port;
  if (server.firstStartTokens)
    process.stdout.write(firstStartBanner(server.firstStartTokens, `http://${flags.host}:${port}`));
}

/**
 * The cluster primary serves nothing itself: it migrates before any worker races to, forks the
 * workers (which share the listening socket), keeps the rate limit buckets of them all, restarts
 * one that dies, and on SIGTERM lets each drain before it exits.
 */
async function superviseWorkers(flags: ServeFlags, rateLimit: RateLimitPolicy | 'off'): Promise<void> {
  const { firstStartBanner, serveMetricsToWorkers } = await import('../server.js');
  const log = createLogger(flags.logLevel);
  // The primary signs nothing (the workers serve); its runtime migrates and issues the first tokens.
  const runtime = await openFor(
    flags,
    publicUrlOf(flags, () => flags.port),
  );
  await warnAboutSetup(flags, runtime, log);
  if (rateLimit !== 'off') serveRateLimitsToWorkers(cluster, createLocalRateLimiter());
  serveMetricsToWorkers(cluster);
  let stopping = false;
  const listening = new Promise<number>((resolve, reject) => {
    let count = 0;
    cluster.on('listening', (_worker, address) => {
      count += 1;
      if (count === flags.workers) resolve(address.port);
    });
    cluster.on('exit', (worker, code, signal) => {
      if (stopping) return;
      if (count < flags.workers) {
        reject(new Error(`A worker exited (code ${code ?? signal}) before the server was up; see its error above.`));
        return;
      }
      log.error({ pid: worker.process.pid, code, signal }, 'worker died; starting another');
      cluster.fork();
    });
  });
  for (let i = 0; i < flags.workers; i += 1) cluster.fork();

  onStopSignal(async (signal) => {
    stopping = true;
    log.info({ signal }, 'stopping workers');
    const exits = Object.values(cluster.workers ?? {}).map(async (worker) => {
      if (!worker || worker.isDead()) return;
      const exited = once(worker, 'exit');
      worker.process.kill('SIGTERM');
      // A worker bounds its own drain; one stuck past it does not hold the whole server up.
      const stuck = setTimeout(() => worker.process.kill('SIGKILL'), flags.drainTimeoutMs + WORKER_EXIT_MARGIN_MS);
      await exited;
      clearTimeout(stuck);
    });
    await Promise.all(exits);
    await runtime.close();
  });

  try {
    const port = await listening;
    const tokens = await runtime.services.apiTokens.issueFirstStartTokens(runtime.defaultWorkspace.id, { type: 'cli' });
    if (tokens) process.stdout.write(firstStartBanner(tokens, `http://${flags.host}:${port}`));
    log.info({ workers: flags.workers, port }, 'all workers listening');
  } catch (error) {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    await runtime.close();
    throw error;
  }
}

export function serveCommand(): Command {
  return addWebhookWorkerOptions(new Command('serve'))
    .description('start the HTTP server (applies migrations first)')
    .addOption(new Option('--port <port>', 'port to listen on').env('UGS_PORT').default(8080).argParser(Number))
    .addOption(new Option('--host <host>', 'address to bind').env('UGS_HOST').default('127.0.0.1'))
    .addOption(databaseOption())
    .addOption(
      new Option('--log-level <level>', 'fatal|error|warn|info|debug|trace').env('UGS_LOG_LEVEL').default('info'),
    )
    .addOption(
      new Option(
        '--rate-limit <rate>',
        'default limit per API token: <n>/s, <n>/min (a bare <n> is per minute), or "off"',
      )
        .env('UGS_RATE_LIMIT')
        .default(parseRate(DEFAULT_RATE_LIMIT), DEFAULT_RATE_LIMIT)
        .argParser(optionParser(parseRateSetting)),
    )
    .addOption(
      new Option(
        '--rate-limit-burst <n>',
        'requests an idle API token may make at once (default: the <n> of --rate-limit)',
      )
        .env('UGS_RATE_LIMIT_BURST')
        .argParser(optionParser(parseBurst)),
    )
    .addOption(
      new Option('--workers <n>', 'number of server processes (node:cluster)')
        .env('UGS_WORKERS')
        .default(1)
        .argParser(positiveInteger),
    )
    .addOption(
      new Option('--db-pool-size <n>', 'PostgreSQL connections per process')
        .env('UGS_DB_POOL_SIZE')
        .default(10)
        .argParser(positiveInteger),
    )
    .addOption(
      millisecondsOption(
        'headers-timeout-ms',
        'UGS_HEADERS_TIMEOUT_MS',
        DEFAULT_SERVER_TIMEOUTS.headersMs,
        "a request's headers must arrive within this",
      ),
    )
    .addOption(
      millisecondsOption(
        'request-timeout-ms',
        'UGS_REQUEST_TIMEOUT_MS',
        DEFAULT_SERVER_TIMEOUTS.requestMs,
        'a whole request, body included, must arrive within this',
      ),
    )
    .addOption(
      millisecondsOption(
        'keep-alive-timeout-ms',
        'UGS_KEEP_ALIVE_TIMEOUT_MS',
        DEFAULT_SERVER_TIMEOUTS.keepAliveMs,
        "an idle keep-alive connection is kept this long (above your load balancer's idle timeout)",
      ),
    )
    .addOption(
      new Option(
        '--public-url <url>',
        'the URL clients reach this service at; embed tokens are issued by <url>/w/<workspace> (default: http://<host>:<port>)',
      )
        .env('UGS_PUBLIC_URL')
        .argParser(optionParser(parsePublicUrl)),
    )
    .addOption(
      millisecondsOption(
        'drain-timeout-ms',
        'UGS_DRAIN_TIMEOUT_MS',
        DRAIN_TIMEOUT_MS,
        'on SIGTERM or SIGINT, requests in flight get this long to finish before the connections close',
      ),
    )
    .addOption(
      millisecondsOption(
        'idle-timeout-ms',
        'UGS_IDLE_TIMEOUT_MS',
        DEFAULT_SERVER_TIMEOUTS.idleMs,
        'a connection on which nothing moves this long is closed',
      ),
    )
    .action(async (flags: ServeFlags) => {
      // Off means off: a burst set alongside (checked all the same) changes nothing.
      const rateLimit = flags.rateLimit === 'off' ? 'off' : rateLimitPolicy(flags.rateLimit, flags.rateLimitBurst);
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
