import { requestFailure } from '../wire/request-errors.js';
import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyInstance } from 'fastify';
import type { AppError } from '../domain/errors.js';
import { errorBody } from './error-handler.js';
import { boundPipelining } from './pipelining.js';
import { markExpectsContinue } from './streamed-body.js';
import type { ServerTimeouts } from '../config/server-timeouts.js';

/** Request line plus headers (Node's default, made explicit); more is 431. */
export const MAX_HEADER_BYTES = 16 * 1024;

/** How often Node checks open connections against the headers and request timeouts (its default, 30 s, is coarser than they are). */
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** The Fastify options that bound what a client can hold: timeouts, header size, pipelining, and the answer when one is exceeded. */
export function serverLimitOptions(timeouts: ServerTimeouts) {
  return {
    // Fastify's own timeout options only apply to a server it creates; this one is created here,
    // so that pipelined requests pass the gate before they reach Fastify (pipelining.ts).
    serverFactory: (handler: RequestListener) => {
      const listener = boundPipelining(handler, timeouts.idleMs);
      const server = createServer(
        {
          headersTimeout: timeouts.headersMs,
          requestTimeout: timeouts.requestMs,
          maxHeaderSize: MAX_HEADER_BYTES,
          connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
          // Node would answer a missing Host with a bare 400 of its own; the app refuses it instead,
          // with the envelope and a request id like any other bad request (app.ts).
          requireHostHeader: false,
        },
        listener,
      );
      // `Expect: 100-continue`: the app sends the 100 when it wants the body (streamed-body.ts), so a
      // request refused before its body is read gets the refusal instead.
      server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
        markExpectsContinue(request);
        listener(request, response);
      });
      server.keepAliveTimeout = timeouts.keepAliveMs;
      server.setTimeout(timeouts.idleMs);
      return server;
    },
    clientErrorHandler: clientErrorHandler(timeouts),
  };
}

/**
 * Errors Node finds before there is a request to route (headers too large, a request not in within
 * its time, bytes that are not HTTP) get the failure envelope too, and the connection is closed:
 * the stream can no longer be trusted to be at a request boundary.
 */
function clientErrorHandler(timeouts: ServerTimeouts) {
  return function onClientError(this: FastifyInstance, error: ConnectionError, socket: Socket): void {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const appError = toAppError(error, timeouts);
    const requestId = randomUUID();
    // The error's raw bytes may hold an Authorization header: only the code is logged.
    this.log.info({ code: appError.code, request_id: requestId }, 'connection rejected');
    // As Node's own handler: no answer into a response that has already started on this socket.
    const inProgress = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    if (socket.writable && !inProgress?.headersSent) socket.write(rawResponse(appError, requestId));
    socket.destroy();
  };
}

function toAppError(error: ConnectionError, timeouts: ServerTimeouts): AppError {
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return requestFailure.headersTooLarge(MAX_HEADER_BYTES / 1024);
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return requestFailure.requestTimeout(timeouts.headersMs, timeouts.requestMs);
  }
  return requestFailure.notHttp();
}

function rawResponse(error: AppError, requestId: string): string {
  const body = JSON.stringify(errorBody(error, requestId));
  return [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}
