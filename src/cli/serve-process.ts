import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { createLogger } from '../logger.js';
import { parseDatabaseUrl } from '../config/database-url.js';
import type { RateLimitOption } from '../rate-limit/rate-limit-setting.js';
import { createWorkerRateLimiter } from '../rate-limit/cluster-rate-limiter.js';
import { createLocalRateLimiter } from '../rate-limit/rate-limiter.js';
import type { RateLimitPolicy } from '../rate-limit/token-bucket.js';
import { openRuntime, type Runtime } from '../runtime.js';
import type { ServeOptions } from '../server.js';
import { issueFirstStartTokens, firstStartTokensFile } from './first-start-tokens.js';
import { PACKAGE_VERSION } from './package-version.js';
import { serverTimeouts, type ServeFlags } from './serve-options.js';
import { oidcSettingsOf } from '../config/oidc-settings.js';

/** Console sign-in through an identity provider, from the --oidc-* flags; throws on a half-made configuration. */
function oidcOptions(flags: ServeFlags): Pick<ServeOptions, 'oidc' | 'tokenSignIn'> {
  const oidc = oidcSettingsOf(flags);
  return { ...(oidc ? { oidc } : {}), tokenSignIn: flags.tokenSignIn === 'on' };
}
import { allowPrivateWebhooks, webhookWorkerSettings } from './webhook-options.js';

/**
 * A single process keeps the buckets itself; a cluster worker asks the primary, which keeps those
 * of the whole server, and falls back to buckets of its own when the primary does not answer.
 */
function rateLimitOption(setting: RateLimitPolicy | 'off'): RateLimitOption {
  if (setting === 'off') return 'off';
  const local = createLocalRateLimiter();
  return { limiter: cluster.worker ? createWorkerRateLimiter(local, cluster.worker) : local, defaultPolicy: setting };
}

export function serveOptions(flags: ServeFlags, rateLimit: RateLimitPolicy | 'off'): ServeOptions {
  return {
    port: flags.port,
    host: flags.host,
    logLevel: flags.logLevel,
    rateLimit: rateLimitOption(rateLimit),
    version: PACKAGE_VERSION,
    drainTimeoutMs: flags.drainTimeoutMs,
    shutdownDelayMs: flags.shutdownDelayMs,
    timeouts: serverTimeouts(flags),
    webhooks: webhookWorkerSettings(flags),
    corsOrigins: flags.corsOrigins,
    ...oidcOptions(flags),
  };
}

/** The issuer base: --public-url, else where this process listens (the port once it is bound). */
export function publicUrlOf(flags: ServeFlags, boundPort: () => number): () => string {
  return () => flags.publicUrl ?? `http://${flags.host}:${boundPort()}`;
}

/** The runtime of a process of `ugs serve`; `serving` (not a cluster's primary) counts usage unless `--usage off`. */
export function openFor(flags: ServeFlags, publicUrl: () => string, { serving }: { serving: boolean }) {
  const log = createLogger(flags.logLevel);
  return openRuntime({
    ...(serving && flags.usage === 'on' ? { usage: { flushMs: flags.usageFlushMs } } : {}),
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
 * embed tokens under its own address, which the others then refuse (docs/api.md#embed-tokens).
 */
export async function warnAboutSetup(flags: ServeFlags, runtime: Runtime, log: Logger): Promise<void> {
  // Before the first request: a database bulk-loaded since its last ANALYZE gets its statistics now.
  for (const warning of await runtime.store.refreshStaleStatistics()) log.warn(warning);
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
export function onStopSignal(stop: (signal: NodeJS.Signals) => Promise<void>): void {
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
export async function serveInThisProcess(flags: ServeFlags, rateLimit: RateLimitPolicy | 'off'): Promise<void> {
  // Loaded here, not at the top: every other command would otherwise pay for loading the HTTP stack.
  const { startServer } = await import('../server.js');
  // Before the database opens: a bad flag must not leave a pool open behind its error.
  const options = serveOptions(flags, rateLimit);
  let port = flags.port;
  const runtime = await openFor(
    flags,
    publicUrlOf(flags, () => port),
    { serving: true },
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
  // Only once the server is up: a start that fails must not use up tokens that were never shown.
  // In a cluster the primary makes them, once every worker listens.
  if (cluster.isPrimary)
    await issueFirstStartTokens(runtime, firstStartTokensFile(flags), `http://${flags.host}:${port}`, server.app.log);
}
