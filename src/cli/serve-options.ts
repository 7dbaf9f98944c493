import { Command, Option } from 'commander';
import { DEFAULT_SERVER_TIMEOUTS, type ServerTimeouts } from '../config/server-timeouts.js';
import {
  DEFAULT_RATE_LIMIT,
  parseBurst,
  parseRate,
  parseRateSetting,
  rateLimitPolicy,
  type Rate,
} from '../rate-limit/rate-limit-setting.js';
import type { RateLimitPolicy } from '../rate-limit/token-bucket.js';
import { DEFAULT_USAGE_FLUSH_MS } from '../domain/usage/usage.rules.js';
import { parseCorsOrigins } from '../config/cors-origins.js';
import { databaseOption, optionParser, positiveInteger, wholeNumber } from './context.js';
import { addWebhookWorkerOptions, type WebhookFlags } from './webhook-options.js';

/** `ugs serve`'s flags (or their UGS_ variables), as commander parses them. */
export interface ServeFlags extends WebhookFlags {
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
  shutdownDelayMs: number;
  publicUrl?: string;
  /** Whether serving processes count usage per group (docs/api.md#usage-per-group); off only to measure what counting costs. */
  usage: 'on' | 'off';
  usageFlushMs: number;
  /** The web origins whose pages may call /api from a browser (none by default). */
  corsOrigins: string[];
  /** Where a first start writes its admin tokens (src/cli/first-start-tokens.ts). */
  firstStartTokens?: string;
}

/** `--public-url`: an http(s) URL, kept without a trailing slash (issuers append `/w/<workspace>`). */
function parsePublicUrl(text: string): string {
  const url = new URL(text);
  if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash) {
    throw new Error('must be an http(s) URL without a query or fragment, e.g. https://ugs.example.com');
  }
  return url.href.replace(/\/+$/, '');
}

const DRAIN_TIMEOUT_MS = 10_000;

/** The HTTP server timeouts the flags set; the headers must not be allowed longer than the whole request. */
export function serverTimeouts(flags: ServeFlags): ServerTimeouts {
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

/** The rate limit the flags set. Off means off: a burst set alongside (checked all the same) changes nothing. */
export function rateLimitOf(flags: ServeFlags): RateLimitPolicy | 'off' {
  return flags.rateLimit === 'off' ? 'off' : rateLimitPolicy(flags.rateLimit, flags.rateLimitBurst);
}

/** The `serve` command with its flags, each also read from its UGS_ variable. */
export function serveCommandWithOptions(): Command {
  return addWebhookWorkerOptions(new Command('serve'))
    .description('start the HTTP server (applies migrations first)')
    .addOption(new Option('--port <port>', 'port to listen on').env('UGS_PORT').default(8080).argParser(Number))
    .addOption(new Option('--host <host>', 'address to bind').env('UGS_HOST').default('127.0.0.1'))
    .addOption(databaseOption())
    .addOption(
      new Option(
        '--first-start-tokens <file>',
        'where a first start writes its admin API tokens (mode 0600; default: <database>.first-start-tokens beside a SQLite database, none on PostgreSQL)',
      ).env('UGS_FIRST_START_TOKENS'),
    )
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
      new Option(
        '--shutdown-delay-ms <ms>',
        "on SIGTERM or SIGINT, /readyz answers 503 at once and requests are still served this long before the drain begins: at least your load balancer's health-check interval, so that it stops sending first",
      )
        .env('UGS_SHUTDOWN_DELAY_MS')
        .default(0)
        .argParser(wholeNumber),
    )
    .addOption(
      millisecondsOption(
        'idle-timeout-ms',
        'UGS_IDLE_TIMEOUT_MS',
        DEFAULT_SERVER_TIMEOUTS.idleMs,
        'a connection on which nothing moves this long is closed',
      ),
    )
    .addOption(
      new Option('--usage <on|off>', 'count usage per group and day (off: for measuring what counting costs)')
        .env('UGS_USAGE')
        .choices(['on', 'off'])
        .default('on'),
    )
    .addOption(
      millisecondsOption(
        'usage-flush-ms',
        'UGS_USAGE_FLUSH_MS',
        DEFAULT_USAGE_FLUSH_MS,
        'usage counts are written this often; a crash (kill -9) loses at most this long of counts',
      ),
    )
    .addOption(
      new Option(
        '--cors-origins <origins>',
        'comma-separated web origins (scheme://host[:port]) whose pages may call /api from a browser; none by default',
      )
        .env('UGS_CORS_ORIGINS')
        .default([], 'none')
        .argParser(optionParser(parseCorsOrigins)),
    );
}
