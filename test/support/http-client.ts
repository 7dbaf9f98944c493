import { request as httpRequest } from 'node:http';
import type { FastifyInstance } from 'fastify';

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body (undefined when the body is empty). */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  raw: string;
}

/** A request before an API token is chosen for it. */
export type UnsignedRequest = Omit<ApiRequest, 'token'>;

export interface ApiRequest {
  method: string;
  path: string;
  token?: string;
  /** Sent as JSON unless `rawBody` is given. */
  body?: unknown;
  /** Sent as it is: text (as UTF-8) or bytes (which need not be UTF-8). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

function requestHeaders(req: ApiRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  if (req.body !== undefined || req.rawBody !== undefined) headers['content-type'] = 'application/json';
  if (req.token !== undefined) headers.authorization = `Token ${req.token}`;
  return { ...headers, ...req.headers };
}

const payloadOf = (req: ApiRequest) => req.rawBody ?? (req.body === undefined ? undefined : JSON.stringify(req.body));

function parse(raw: string): unknown {
  return raw === '' ? undefined : JSON.parse(raw);
}

/** Through Fastify's inject: fast, no socket. */
export async function inject(app: FastifyInstance, req: ApiRequest): Promise<ApiResponse> {
  const payload = payloadOf(req);
  const response = await app.inject({
    method: req.method as 'GET',
    url: req.path,
    headers: requestHeaders(req),
    ...(payload !== undefined ? { payload } : {}),
  });
  return {
    status: response.statusCode,
    headers: response.headers as ApiResponse['headers'],
    body: parse(response.body),
    raw: response.body,
  };
}

/** Over a real socket with node:http, which (unlike fetch) can send a body with GET. */
export function send(baseUrl: string, req: ApiRequest): Promise<ApiResponse> {
  const payload = payloadOf(req);
  const url = new URL(req.path, baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      url,
      {
        method: req.method,
        headers: {
          ...requestHeaders(req),
          ...(payload !== undefined ? { 'content-length': String(Buffer.byteLength(payload)) } : {}),
        },
        agent: false,
      },
      (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: parse(raw), raw });
        });
        incoming.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(payload);
  });
}

export type Client = (req: ApiRequest) => Promise<ApiResponse>;

/** Both transports under one signature, so a suite can run over inject and over a socket. */
export function injectClient(app: FastifyInstance): Client {
  return (req) => inject(app, req);
}

export function socketClient(baseUrl: string): Client {
  return (req) => send(baseUrl, req);
}

/**
 * Far beyond the service's own limits (3 s to get a connection, 5 s + 1 s per statement), so an
 * answer that has not come by then means a hung request: the call fails instead of waiting on.
 */
export const REQUEST_TIMEOUT_MS = 15_000;

/** One request over a socket to a running server, failing after REQUEST_TIMEOUT_MS without an answer. */
export async function call(server: { baseUrl: string }, req: ApiRequest): Promise<ApiResponse> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms to ${req.method} ${req.path} on ${server.baseUrl}`),
        ),
      REQUEST_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([send(server.baseUrl, req), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Where a request goes: a Client (inject or a socket), or a running server, reached with `call`. */
export type Target = Client | { baseUrl: string };

export function clientFor(target: Target): Client {
  return typeof target === 'function' ? target : (req) => call(target, req);
}
