import { createHash } from 'node:crypto';
import { callerKey } from '../domain/console-sessions/oidc-session.records.js';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requireScope } from '../domain/api-tokens/scopes.js';
import { atPosition, type AppError, type InputPosition } from '../domain/errors.js';
import { canonicalJson } from '../domain/idempotency/idempotency.rules.js';
import type { Scope } from '../domain/tenancy.js';
import { JsonItemsSplitter, type JsonItemBounds } from '../wire/json-items.reader.js';
import { requestFailure } from '../wire/request-errors.js';
import { createInFlightLimit, type InFlightLimits } from './in-flight-limit.js';
import { jsonDefectError, MAX_BODY_DEPTH, parseStrictJson } from '../wire/strict-json.js';

/**
 * A route whose body is many JSON items (a JSON array, or NDJSON), read as a stream after the
 * request is admitted: the sync, and every route that takes such a file. Declared in the route's
 * config; registerStreamedBodies does the rest.
 */
export interface StreamedBodyRoute<T = unknown> {
  /** The scope the caller needs: checked, with the rate limit and the bodies in flight, before a byte is read. */
  scope: Scope;
  /** Accepted media types (UTF-8 only); anything else is 415 before the body is read. */
  mediaTypes: readonly string[];
  /** The whole body's bound; a Content-Length over it is refused before reading. */
  maxBytes: number;
  items: JsonItemBounds;
  /** One item, parsed strictly (docs/api.md#wire-conventions), to what the handler takes; throws its refusal. */
  item: (value: unknown, at: InputPosition) => T;
  /** The refusal of a body with no item at all (nothing but white space). */
  empty: () => AppError;
  /**
   * An item that is not JSON, handed on as this instead of refusing the body (an import reports
   * such a line in its summary, as the CLI does). Without it, the body is refused at that item.
   */
  unparsable?: (at: InputPosition) => T;
  /**
   * What an Idempotency-Key's fingerprint takes of an item (default: the item). A route whose items
   * carry secrets gives them as keyed hashes here: a fingerprint is kept, and must not let anyone
   * test guesses of a secret against it.
   */
  fingerprint?: (item: T) => unknown;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    streamedBody?: StreamedBodyRoute;
  }
  interface FastifyRequest {
    /** What an Idempotency-Key's retry is compared by when request.body is not the body as sent (a streamed body's digest). */
    idempotentBody?: unknown;
  }
}

/** Defaults: sync bodies one API token, and one process, may have in flight (from admission to the answer). */
export const STREAMED_BODY_LIMITS: InFlightLimits = { perToken: 2, perProcess: 4 };

/** Work on a body between two turns of the event loop, so that other requests keep being answered. */
const SLICE_MS = 4;

/**
 * How long a connection refused before its body was read stays half-closed (the answer sent, then
 * FIN, the socket not read) before it is closed: time for the answer to reach the client, which
 * would lose it to the reset an immediate close sends when unread bytes are waiting (RFC 9112 §9.6).
 */
const LINGER_MS = 2_000;

const EXPECTS_CONTINUE = Symbol('expectsContinue');
type MarkedRequest = IncomingMessage & { [EXPECTS_CONTINUE]?: boolean };

/**
 * The server's 'checkContinue' listener: Node would answer `100 Continue` at once; instead the request
 * is handed on marked, and the 100 is sent when the body is wanted — at once for every route but a
 * streamed one, which sends it only once admitted, so a refusal comes instead of the 100.
 */
export function markExpectsContinue(request: IncomingMessage): void {
  (request as MarkedRequest)[EXPECTS_CONTINUE] = true;
}

function sendContinue(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw as MarkedRequest;
  if (!raw[EXPECTS_CONTINUE]) return;
  raw[EXPECTS_CONTINUE] = false;
  if (!reply.raw.headersSent) reply.raw.writeContinue();
}

/** An app-wide onRequest step: the 100 a client waits for, except on streamed routes (see markExpectsContinue). */
export function continueUnlessStreamed(request: FastifyRequest, reply: FastifyReply): void {
  if (!request.routeOptions.config?.streamedBody) sendContinue(request, reply);
}

interface StreamState {
  controller: AbortController;
  items: unknown[] | undefined;
}

const states = new WeakMap<FastifyRequest, StreamState>();

/** The items of a streamed body, read and checked (after the route's preHandler steps). */
export function streamedItems<T>(request: FastifyRequest): T[] {
  const items = states.get(request)?.items;
  if (!items) throw new Error('streamedItems: not a streamed-body route, or its body was not read');
  return items as T[];
}

/** Aborts when the client goes before its answer is sent: the work for it can stop. */
export function clientGone(request: FastifyRequest): AbortSignal {
  const state = states.get(request);
  if (!state) throw new Error('clientGone: not a streamed-body route');
  return state.controller.signal;
}

/**
 * The content-type parsers of a plugin whose routes take streamed bodies: the body is left unread
 * (the stream is the request's body) for the route's preHandler step to read once admitted.
 */
export function acceptStreamedBodies(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
}

/**
 * Streamed-body routes (StreamedBodyRoute in their config) registered on `api` after this: admission
 * (scope, media type, declared length, bodies in flight) right after authentication and the rate
 * limit, before any byte of the body is read; the body read and checked item by item as it arrives;
 * a refusal before the body's end closes the connection. Register it after registerIdempotency, so
 * that the body is read before an Idempotency-Key is claimed.
 */
export function registerStreamedBodies(api: FastifyInstance, limits: InFlightLimits = STREAMED_BODY_LIMITS): void {
  const inFlight = createInFlightLimit(limits);

  const admit = async (request: FastifyRequest, reply: FastifyReply) => {
    const route = request.routeOptions.config.streamedBody!;
    requireScope(request.caller, route.scope);
    assertMediaType(request, route.mediaTypes);
    const declared = Number(request.headers['content-length']);
    if (declared > route.maxBytes) throw requestFailure.bodyTooLarge(route.maxBytes);
    const release = inFlight.acquire(callerKey(request.caller));
    const controller = new AbortController();
    reply.raw.once('close', () => {
      release();
      if (!reply.raw.writableFinished) controller.abort();
    });
    states.set(request, { controller, items: undefined });
  };

  const read = async (request: FastifyRequest, reply: FastifyReply) => {
    const route = request.routeOptions.config.streamedBody!;
    const state = states.get(request)!;
    const digest = request.headers['idempotency-key'] === undefined ? undefined : createHash('sha256');
    const items: unknown[] = [];
    const splitter = new JsonItemsSplitter(route.items, (text, at) => {
      const parsed = parseStrictJson(text, MAX_BODY_DEPTH);
      if (!parsed.ok && !route.unparsable) throw atPosition(jsonDefectError(parsed.defect), at);
      const item = parsed.ok ? route.item(parsed.value, at) : route.unparsable!(at);
      digest?.update(canonicalJson(route.fingerprint ? route.fingerprint(item) : item)).update('\n');
      items.push(item);
    });
    sendContinue(request, reply);
    await readInSlices(request.body as Readable | undefined, route.maxBytes, splitter);
    if (!splitter.sawContent) throw route.empty();
    state.items = items;
    request.idempotentBody = digest ? { items_sha256: digest.digest('hex') } : undefined;
  };

  // A refusal before the body's end: the rest is not read, and the connection cannot carry another request.
  const closeIfUnread = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (!request.raw.complete) {
      reply.header('connection', 'close');
      lingerOnClose(request.raw);
    }
    return payload;
  };

  api.addHook('onRoute', (route) => {
    if (!route.config?.streamedBody) return;
    route.onRequest = [...[route.onRequest ?? []].flat(), admit];
    // First of the preHandler steps: the body is read before an Idempotency-Key is claimed on it.
    route.preHandler = [read, ...[route.preHandler ?? []].flat()];
    route.onSend = [closeIfUnread, ...[route.onSend ?? []].flat()];
  });
}

/** Feeds the body to the splitter as it arrives, giving the event loop a turn every SLICE_MS of work. */
async function readInSlices(body: Readable | undefined, maxBytes: number, splitter: JsonItemsSplitter): Promise<void> {
  if (body === undefined) return splitter.end();
  let bytes = 0;
  let sliceStart = performance.now();
  for (let chunk = await nextChunk(body); chunk !== null; chunk = await nextChunk(body)) {
    bytes += chunk.length;
    if (bytes > maxBytes) throw requestFailure.bodyTooLarge(maxBytes);
    splitter.push(chunk);
    if (performance.now() - sliceStart > SLICE_MS) {
      await yieldToEventLoop();
      sliceStart = performance.now();
    }
  }
  splitter.end();
}

/**
 * The body's next chunk, null at its end. Not `for await`: leaving that loop early (a refusal)
 * destroys the request, and with it the socket, before the refusal could be sent.
 */
async function nextChunk(body: Readable): Promise<Buffer | null> {
  for (;;) {
    const chunk = body.read() as Buffer | null;
    if (chunk !== null) return chunk;
    if (body.readableEnded) return null;
    if (body.destroyed) throw requestFailure.bodyIncomplete();
    await new Promise<void>((resolve) => {
      const settle = () => {
        body.off('readable', settle).off('end', settle).off('close', settle).off('error', settle);
        resolve();
      };
      body.on('readable', settle).on('end', settle).on('close', settle).on('error', settle);
    });
  }
}

const UTF8_CHARSET = /^utf-?8$/i;

function assertMediaType(request: FastifyRequest, accepted: readonly string[]): void {
  const header = request.headers['content-type'];
  if (header === undefined) {
    // No body at all is the route's "empty" refusal, once admitted; a body of no stated type is not taken.
    const length = request.headers['content-length'];
    if (request.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return;
    throw requestFailure.notJsonMediaType();
  }
  const type = header.split(';', 1)[0]!;
  if (!accepted.includes(type.trim().toLowerCase())) throw requestFailure.notJsonMediaType();
  const charset = /;\s*charset=("?)([^";]+)\1/i.exec(header)?.[2];
  if (charset !== undefined && !UTF8_CHARSET.test(charset)) throw requestFailure.notJsonMediaType();
}

/**
 * Once the refusal is written, Node ends the socket and destroys it as soon as the write is flushed;
 * with the client still sending, the close resets the connection, which can cost the client the
 * answer. Instead: FIN after the answer, the socket not read, closed after LINGER_MS or when the
 * client closes first.
 */
function lingerOnClose(request: IncomingMessage): void {
  const socket = request.socket as IncomingMessage['socket'] & { destroySoon?: () => void };
  if (socket.destroyed) return;
  socket.destroySoon = () => {
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
    // Node resumes the request to discard the rest of the body; this stops the socket reading again.
    setImmediate(() => {
      request.removeAllListeners('data');
      request.pause();
      socket.pause();
    });
  };
}
