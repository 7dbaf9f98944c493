import { Option, type Command } from 'commander';
import { DEFAULT_WEBHOOK_WORKER_SETTINGS, type WebhookWorkerSettings } from '../webhooks/delivery-worker.js';
import { optionParser, positiveInteger } from './context.js';

export interface WebhookFlags {
  webhookAllowPrivate?: boolean;
  webhookConcurrency: number;
  webhookTimeoutMs: number;
  webhookLeaseMs: number;
  webhookRetryDelaysMs: number[];
  webhookFailureWindowMs: number;
}

const ALLOW_PRIVATE_VARIABLE = 'UGS_WEBHOOK_ALLOW_PRIVATE';

/** `--webhook-allow-private`, or UGS_WEBHOOK_ALLOW_PRIVATE=true; any other value of the variable is refused, not taken as "no". */
export function allowPrivateWebhooks(flags: { webhookAllowPrivate?: boolean }): boolean {
  const variable = process.env[ALLOW_PRIVATE_VARIABLE];
  if (variable !== undefined && variable !== 'true' && variable !== 'false') {
    throw new Error(`${ALLOW_PRIVATE_VARIABLE} must be true or false, not ${JSON.stringify(variable)}.`);
  }
  return flags.webhookAllowPrivate === true || variable === 'true';
}

export const allowPrivateOption = () =>
  new Option(
    '--webhook-allow-private',
    `let webhook URLs reach loopback, private, link-local and unspecified addresses, for development and tests (or ${ALLOW_PRIVATE_VARIABLE}=true)`,
  );

function retryDelays(text: string): number[] {
  const delays = text.split(',').map((part) => positiveInteger(part.trim()));
  if (delays.length === 0) throw new Error('list at least one delay');
  return delays;
}

/** The delivery worker's flags on `ugs serve`. */
export function addWebhookWorkerOptions(command: Command): Command {
  const defaults = DEFAULT_WEBHOOK_WORKER_SETTINGS;
  return command
    .addOption(allowPrivateOption())
    .addOption(
      new Option('--webhook-concurrency <n>', 'webhook attempts in flight at once per process')
        .env('UGS_WEBHOOK_CONCURRENCY')
        .default(defaults.concurrency)
        .argParser(positiveInteger),
    )
    .addOption(
      new Option('--webhook-timeout-ms <ms>', "a webhook attempt's whole time, at most 10000")
        .env('UGS_WEBHOOK_TIMEOUT_MS')
        .default(defaults.attemptTimeoutMs)
        .argParser(positiveInteger),
    )
    .addOption(
      new Option('--webhook-lease-ms <ms>', 'how long a process holds a delivery it attempts; longer than the timeout')
        .env('UGS_WEBHOOK_LEASE_MS')
        .default(defaults.leaseMs)
        .argParser(positiveInteger),
    )
    .addOption(
      new Option(
        '--webhook-retry-delays-ms <list>',
        'comma-separated waits before each retry (jitter adds up to a quarter)',
      )
        .env('UGS_WEBHOOK_RETRY_DELAYS_MS')
        .default([...defaults.retryDelaysMs], defaults.retryDelaysMs.join(','))
        .argParser(optionParser(retryDelays)),
    )
    .addOption(
      new Option('--webhook-failure-window-ms <ms>', 'an endpoint whose attempts have all failed this long is disabled')
        .env('UGS_WEBHOOK_FAILURE_WINDOW_MS')
        .default(defaults.failureWindowMs)
        .argParser(positiveInteger),
    );
}

/** The worker's settings from the flags; refuses a timeout above the 10 s of docs/api.md#webhooks and a lease that would not outlast it. */
export function webhookWorkerSettings(flags: WebhookFlags): Partial<WebhookWorkerSettings> {
  if (flags.webhookTimeoutMs > DEFAULT_WEBHOOK_WORKER_SETTINGS.attemptTimeoutMs) {
    throw new Error(
      `--webhook-timeout-ms (UGS_WEBHOOK_TIMEOUT_MS) must be at most ${DEFAULT_WEBHOOK_WORKER_SETTINGS.attemptTimeoutMs}.`,
    );
  }
  if (flags.webhookLeaseMs <= flags.webhookTimeoutMs) {
    throw new Error(
      '--webhook-lease-ms (UGS_WEBHOOK_LEASE_MS) must be longer than --webhook-timeout-ms: a lease must outlast the attempt it covers.',
    );
  }
  return {
    allowPrivate: allowPrivateWebhooks(flags),
    concurrency: flags.webhookConcurrency,
    attemptTimeoutMs: flags.webhookTimeoutMs,
    leaseMs: flags.webhookLeaseMs,
    retryDelaysMs: flags.webhookRetryDelaysMs,
    failureWindowMs: flags.webhookFailureWindowMs,
  };
}
