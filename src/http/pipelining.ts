import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Responses one connection may have in the making or waiting to be sent at once (docs/api.md#wire-conventions: a client
 * that pipelines without reading holds "a few responses at most"). Four keeps a pipelining client that does
 * read at full speed (the next response is ready when the socket drains), while a client that
 * never reads can make the server hold four responses, not one per request it sent.
 */
export const MAX_RESPONSES_PER_CONNECTION = 4;

/**
 * Requests of one connection that may wait for their turn; a client that has sent more than this
 * without reading is closed at once (RFC 9112 §9.3.2 lets a server close a pipelining connection;
 * the client retries what was not answered). A real client pipelines a handful of requests at
 * most, so this only meets floods: Node has already parsed them, and what they hold goes with the
 * connection.
 */
export const MAX_WAITING_PER_CONNECTION = 64;

/**
 * Bytes of finished responses a connection's socket may still hold, unread by the client, before
 * the connection's next response waits. A response counts as finished once Node has handed its last
 * byte to the socket, which buffers what the kernel does not take: without this, a client that
 * pipelines requests within the bounds above but never reads made the server keep every answer
 * (60 × 105 KiB of /openapi.json per connection). With it a connection holds at most this plus
 * MAX_RESPONSES_PER_CONNECTION responses; a client that reads drains it long before.
 */
export const MAX_UNREAD_BYTES_PER_CONNECTION = 256 * 1024;

interface ConnectionGate {
  /** Requests of this connection between their start and the end of their response. */
  active: number;
  /** Requests that arrived (pipelined) while `active` was at the bound, oldest first. */
  waiting: Array<() => void>;
  /** Closes the connection when no response of it completes for the idle timeout while requests wait. */
  stall: NodeJS.Timeout | undefined;
  /** Whether this gate paused the socket (Node may pause it too, for its own reasons, and resumes that itself). */
  paused: boolean;
}

/**
 * Node parses every request of a chunk at once and Fastify answers each as soon as it can, so 1 000
 * pipelined requests in one write were 1 000 responses queued in memory behind a client that never
 * reads them. This wraps the server's request handler: a connection's requests reach the app only
 * while fewer than MAX_RESPONSES_PER_CONNECTION of its responses are unfinished; up to
 * MAX_WAITING_PER_CONNECTION more wait for their turn, holding only Node's request objects, and the
 * socket is not read meanwhile; beyond that the connection is closed. A connection whose responses
 * stop completing for `idleMs` while requests wait is closed too. A response completes when Node
 * has handed its last byte to the socket and the socket holds no more than
 * MAX_UNREAD_BYTES_PER_CONNECTION unread, so a client that does not read cannot make the server
 * buffer its answers either.
 */
export function boundPipelining(handler: RequestListener, idleMs: number): RequestListener {
  const gates = new WeakMap<Socket, ConnectionGate>();

  const gateOf = (socket: Socket): ConnectionGate => {
    let gate = gates.get(socket);
    if (gate) return gate;
    const created: ConnectionGate = { active: 0, waiting: [], stall: undefined, paused: false };
    gates.set(socket, created);
    socket.once('close', () => {
      clearTimeout(created.stall);
      // The requests still waiting can never be answered: dropped without running, collected with the connection.
      created.waiting.length = 0;
    });
    gate = created;
    return gate;
  };

  const armStall = (gate: ConnectionGate, socket: Socket) => {
    clearTimeout(gate.stall);
    gate.stall = gate.waiting.length > 0 ? setTimeout(() => socket.destroy(), idleMs) : undefined;
  };

  return (request: IncomingMessage, response: ServerResponse) => {
    const { socket } = request;
    const gate = gateOf(socket);
    const release = () => {
      gate.active -= 1;
      const next = gate.waiting.shift();
      if (next) next();
      else if (gate.paused) {
        gate.paused = false;
        socket.resume();
      }
      armStall(gate, socket);
    };
    const run = () => {
      gate.active += 1;
      response.once('close', () => {
        // The slot frees once the client has taken what the socket holds for it; a client that
        // never reads never frees it, and the stall timer (or the idle timeout) closes it.
        if (socket.writableLength > MAX_UNREAD_BYTES_PER_CONNECTION && !socket.destroyed) socket.once('drain', release);
        else release();
      });
      handler(request, response);
    };
    if (gate.active < MAX_RESPONSES_PER_CONNECTION) return run();
    if (gate.waiting.length >= MAX_WAITING_PER_CONNECTION || socket.destroyed) {
      // Never answered, never run: dropped with the connection.
      socket.destroy();
      return;
    }
    gate.waiting.push(run);
    // Read no more requests from a client that is not reading its answers.
    gate.paused = true;
    socket.pause();
    if (gate.stall === undefined) armStall(gate, socket);
  };
}
