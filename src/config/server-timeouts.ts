/** How long the server waits on a client, in milliseconds (docs/security.md, "Hardening"). */
export interface ServerTimeouts {
  /** From a connection's (or a request's) first byte to the end of its headers: slowloris. */
  headersMs: number;
  /** From a request's first byte to the end of its body: a body trickled in. */
  requestMs: number;
  /** How long an idle keep-alive connection waits for its next request; longer than a load balancer's idle timeout. */
  keepAliveMs: number;
  /** A connection on which nothing moves either way for this long is closed (say, a client that stopped reading). */
  idleMs: number;
}

export const DEFAULT_SERVER_TIMEOUTS: ServerTimeouts = {
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 72_000,
  idleMs: 60_000,
};
