// Shared by the scale-out suites: calls that never hang a test, the API calls they repeat, the
// failure assertions, bounded polling and a look at a process's children in /proc.
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, expect } from 'vitest';
import { expectError } from '../support/error-envelope.js';
import { call, type ApiResponse } from '../support/http-client.js';
import { listAll, type PageReader } from '../support/paged-list.js';
import { stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import type { TestDatabase } from '../support/test-database.js';
import type { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The webhook settings of `ugs serve` processes in these suites: private addresses allowed (the
 * receivers are on loopback), a short attempt timeout and lease, so a killed process's deliveries
 * are taken over within seconds, and a quick retry.
 */
export const WEBHOOK_SERVE_ENV = {
  UGS_WEBHOOK_ALLOW_PRIVATE: 'true',
  UGS_WEBHOOK_TIMEOUT_MS: '1000',
  UGS_WEBHOOK_LEASE_MS: '2000',
  UGS_WEBHOOK_RETRY_DELAYS_MS: '200',
};

/** What a webhook scale suite opens: set by its test, closed after the suite with every serve process it started. */
export interface WebhookScaleFixture {
  db?: TestDatabase;
  receiver?: WebhookReceiver;
}

export function useWebhookScaleFixture(): WebhookScaleFixture {
  const fixture: WebhookScaleFixture = {};
  afterAll(async () => {
    await stopAllServeProcesses();
    await fixture.receiver?.close();
    await fixture.db?.drop();
  });
  return fixture;
}

/** Reads list pages over a socket with `token`, for listAll and collectPages. */
export function socketReader(server: Pick<ServeProcess, 'baseUrl'>, token: string): PageReader {
  return (path) => call(server, { method: 'GET', path, token });
}

export interface ListedDelivery {
  event_id: string;
  event_type: string;
  status: string;
}

/** Every webhook delivery the database holds, once the receiver has had each one's event at least once. */
export async function everyDeliveryReceived(
  server: Pick<ServeProcess, 'baseUrl'>,
  token: string,
  receiver: WebhookReceiver,
): Promise<ListedDelivery[]> {
  const deliveries = await listAll<ListedDelivery>(
    socketReader(server, token),
    '/api/admin/webhook_deliveries',
    'webhook_deliveries',
  );
  await waitFor('every webhook event received', 30_000, () => {
    const received = new Set(receiver.received.map((entry) => entry.json.id as string));
    return deliveries.every((delivery) => received.has(delivery.event_id)) ? true : undefined;
  });
  return deliveries;
}

/** 503 `unavailable` with a Retry-After of whole seconds. */
export function expectUnavailable(response: ApiResponse): void {
  expectError(response, 503, 'unavailable');
  expect(response.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
}

import { waitFor } from '../support/wait-for.js';

export { sleep, waitFor } from '../support/wait-for.js';

interface ProcessInfo {
  pid: number;
  ppid: number;
  state: string;
}

/** /proc/<pid>/stat, or undefined when there is no such process (any more). */
function processInfo(pid: number): ProcessInfo | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ")".
  const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pid, ppid: Number(ppid), state: state ?? '?' };
}

/** Every live (not zombie) process, from /proc. */
function liveProcesses(): ProcessInfo[] {
  return readdirSync('/proc')
    .filter((name) => /^[0-9]+$/.test(name))
    .map((name) => processInfo(Number(name)))
    .filter((info): info is ProcessInfo => info !== undefined && info.state !== 'Z');
}

/** The live child processes of `pid` (what `ps --ppid <pid>` shows). */
export function childPids(pid: number): number[] {
  return liveProcesses()
    .filter((info) => info.ppid === pid)
    .map((info) => info.pid)
    .sort((a, b) => a - b);
}

/** The live processes whose command line has this argument (say, a test's database URL). */
export function pidsWithArgument(argument: string): number[] {
  return liveProcesses()
    .filter((info) => commandLine(info.pid)?.includes(argument))
    .map((info) => info.pid);
}

/** The command line of a process, or undefined when it is gone. */
export function commandLine(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((part) => part !== '');
  } catch {
    return undefined;
  }
}

/** Whether a `ugs serve` process with this pid still exists (a recycled pid running something else does not count). */
export function isUgsProcessAlive(pid: number): boolean {
  const info = processInfo(pid);
  return info !== undefined && info.state !== 'Z' && (commandLine(pid) ?? []).some((part) => part.endsWith('ugs.js'));
}
