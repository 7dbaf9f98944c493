import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { bareHost, deliverableAddresses, RefusedDestinationError, type Resolver } from './address-policy.js';

/** The most of a receiver's answer that is read (docs/api.md#webhooks); the rest is never taken off the wire. */
export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

/**
 * What an attempt got: a status (any, 2xx is success) or, without a response, why not (`error`, the
 * words the tenant sees in last_error); `detail`, for the operator's log only, says more where the
 * tenant must not learn it (what a refused name resolved to).
 */
export interface WebhookResponse {
  status: number | null;
  error: string | null;
  detail?: string;
}

export interface WebhookSenderOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  resolve: Resolver;
}

/**
 * Posts webhooks with node:http(s): no redirects are followed (a 3xx is an answer like any other),
 * the whole attempt (lookup, connect, answer, body) ends at the timeout, and the address is checked
 * at each connection, by the lookup the socket connects with, so a name that resolves elsewhere
 * since the endpoint was created (DNS rebinding) is refused then. Connections are kept alive per
 * host, as a receiver's bursts call for.
 */
export function createWebhookSender(options: WebhookSenderOptions) {
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    deliverableAddresses(hostname, options).then(
      (addresses) => {
        if (lookupOptions.all)
          callback(
            null,
            addresses.map((address) => ({ address, family: isIP(address) })),
          );
        else callback(null, addresses[0]!, isIP(addresses[0]!));
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
  const agentOptions = { keepAlive: true, maxSockets: 16, lookup } as const;
  const agents = { 'http:': new http.Agent(agentOptions), 'https:': new https.Agent(agentOptions) };

  const send = async ({ url, body, headers }: WebhookRequest): Promise<WebhookResponse> => {
    const target = new URL(url);
    // A literal address never reaches the lookup: it is checked here instead.
    if (isIP(bareHost(target.hostname))) await deliverableAddresses(target.hostname, options);
    const client = target.protocol === 'https:' ? https : http;
    // One timer bounds the whole attempt (connect, answer and body), cleared once the request closes.
    return new Promise<WebhookResponse>((resolve, reject) => {
      const request = client.request(
        target,
        {
          method: 'POST',
          agent: agents[target.protocol as 'http:' | 'https:'],
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        },
        (response) => {
          // The status is the answer (a 2xx within the timeout is success, whatever follows); the body
          // is read, to at most MAX_RESPONSE_BYTES, only so that the connection can be reused.
          resolve({ status: response.statusCode ?? null, error: null });
          let read = 0;
          response.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_RESPONSE_BYTES) response.destroy();
          });
          response.on('error', () => undefined);
        },
      );
      const timer = setTimeout(() => request.destroy(new TimeoutError()), options.timeoutMs);
      request.on('close', () => clearTimeout(timer));
      request.on('error', reject);
      request.end(body);
    });
  };

  return {
    async send(request: WebhookRequest): Promise<WebhookResponse> {
      try {
        return await send(request);
      } catch (error) {
        if (error instanceof RefusedDestinationError)
          return { status: null, error: error.message, detail: error.detail };
        return { status: null, error: describe(error) };
      }
    },
    close(): void {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

class TimeoutError extends Error {
  constructor() {
    super('timed out');
    this.name = 'TimeoutError';
  }
}

function describe(error: unknown): string {
  const { name, message, code } = error as NodeJS.ErrnoException;
  if (name === 'TimeoutError') return 'timed out';
  return code ? `${code}: ${message}` : message;
}

export type WebhookSender = ReturnType<typeof createWebhookSender>;
