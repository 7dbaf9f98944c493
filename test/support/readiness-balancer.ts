// A load balancer on loopback as the tests' stand-in for one in front of several instances: it sends
// each request to a backend whose /readyz answered 200 at its last check (every CHECK_INTERVAL_MS),
// in turn, and stops sending to one the moment it is deregistered (as an orchestrator deregisters a
// pod before its preStop delay and SIGTERM). A request whose connection is refused goes to another
// backend, as balancers retry a connect failure (nothing was sent, so any method is safe to retry);
// any other failure reaches the client as a 502.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const CHECK_INTERVAL_MS = 100;

/** The balancer's own refusal, as JSON like every answer the clients parse. */
const refuse = (outgoing: ServerResponse, reason: string) =>
  outgoing.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ balancer: reason }));
const CHECK_TIMEOUT_MS = 1_000;

export interface ReadinessBalancer {
  baseUrl: string;
  /** Puts a backend in the pool; it gets requests once its /readyz has answered 200. */
  register(baseUrl: string): void;
  /** Takes a backend out at once: no new request goes to it. */
  deregister(baseUrl: string): void;
  /** How many requests each backend was sent. */
  sent(): Map<string, number>;
  close(): Promise<void>;
}

interface Backend {
  url: URL;
  ready: boolean;
  sent: number;
}

function readyStatus(url: URL): Promise<boolean> {
  return new Promise((resolve) => {
    const check = httpRequest(new URL('/readyz', url), { agent: false, timeout: CHECK_TIMEOUT_MS }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    check.on('timeout', () => check.destroy());
    check.on('error', () => resolve(false));
    check.end();
  });
}

export async function startReadinessBalancer(): Promise<ReadinessBalancer> {
  const backends = new Map<string, Backend>();
  let turn = 0;

  const checks = setInterval(() => {
    for (const backend of backends.values())
      void readyStatus(backend.url).then((ready) => {
        backend.ready = ready;
      });
  }, CHECK_INTERVAL_MS);

  const pick = (tried: Set<Backend>): Backend | undefined => {
    const ready = [...backends.values()].filter((backend) => backend.ready && !tried.has(backend));
    return ready.length === 0 ? undefined : ready[turn++ % ready.length];
  };

  const forward = (incoming: IncomingMessage, body: Buffer, outgoing: ServerResponse, tried: Set<Backend>) => {
    const backend = pick(tried);
    if (!backend) {
      refuse(outgoing, 'no ready backend');
      return;
    }
    tried.add(backend);
    backend.sent += 1;
    const upstream = httpRequest(
      new URL(incoming.url ?? '/', backend.url),
      { method: incoming.method, headers: { ...incoming.headers, connection: 'close' }, agent: false },
      (response) => {
        outgoing.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(outgoing);
      },
    );
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') forward(incoming, body, outgoing, tried);
      else if (!outgoing.headersSent) refuse(outgoing, `upstream failed: ${error.message}`);
      else outgoing.destroy(error);
    });
    upstream.end(body);
  };

  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => forward(incoming, Buffer.concat(chunks), outgoing, new Set()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    register(baseUrl) {
      backends.set(baseUrl, { url: new URL(baseUrl), ready: false, sent: 0 });
    },
    deregister(baseUrl) {
      backends.delete(baseUrl);
    },
    sent: () => new Map([...backends].map(([url, backend]) => [url, backend.sent])),
    async close() {
      clearInterval(checks);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
