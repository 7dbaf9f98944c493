// A real webhook receiver on loopback: records every request it gets and answers as told.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  /** The parsed body. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  /** When it arrived (Date.now()). */
  at: number;
}

/** How to answer one request: a status (200 unless given), after a delay, or never (`hang`). */
export interface Answer {
  status?: number;
  delayMs?: number;
  hang?: boolean;
  body?: string;
}

export type Responder = (request: ReceivedWebhook, received: ReceivedWebhook[]) => Answer;

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Requests being answered right now, by event id (webhook-id). */
  inFlight: Map<string, number>;
  /** Event ids that arrived while another request with the same id was still being answered. */
  overlapping: string[];
  respond(responder: Responder): void;
  /** Resolves once `done(received)` holds; fails after `timeoutMs`. */
  waitFor(done: (received: ReceivedWebhook[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(responder: Responder = () => ({})): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const inFlight = new Map<string, number>();
  const overlapping: string[] = [];
  let answer = responder;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const entry: ReceivedWebhook = { headers: request.headers, body, json: JSON.parse(body), at: Date.now() };
      const id = String(request.headers['webhook-id']);
      if ((inFlight.get(id) ?? 0) > 0) overlapping.push(id);
      inFlight.set(id, (inFlight.get(id) ?? 0) + 1);
      received.push(entry);
      const { status = 200, delayMs = 0, hang = false, body: answerBody = '' } = answer(entry, received);
      const finish = () => {
        inFlight.set(id, (inFlight.get(id) ?? 1) - 1);
      };
      response.on('close', finish);
      if (hang) return;
      setTimeout(() => response.writeHead(status, { 'content-type': 'text/plain' }).end(answerBody), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    inFlight,
    overlapping,
    respond: (next) => {
      answer = next;
    },
    async waitFor(done, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done(received)) {
        if (Date.now() > deadline)
          throw new Error(
            `the receiver did not get what was expected within ${timeoutMs} ms (it got ${received.length} requests)`,
          );
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
