import type { RateLimiter } from './rate-limiter.js';
import type { RateLimitDecision, RateLimitPolicy } from './token-bucket.js';

/*
 * With --workers, the buckets live in the cluster primary, so that the limit holds for the server as
 * a whole: each worker asks the primary for a token over the cluster's IPC channel, one message each
 * way, matched by a correlation id. The primary serves no HTTP, so it answers within microseconds.
 */

const TAKE = 'ugs:rate-limit:take';
const DECISION = 'ugs:rate-limit:decision';

interface TakeMessage {
  type: typeof TAKE;
  id: number;
  key: string;
  policy: RateLimitPolicy;
}

interface DecisionMessage {
  type: typeof DECISION;
  id: number;
  decision: RateLimitDecision;
}

/** How long a worker waits for the primary before it decides on its own. */
export const PRIMARY_ANSWER_TIMEOUT_MS = 500;

/** A worker's end of the channel: `process` in a cluster worker. */
export interface ChannelToPrimary {
  send(
    message: TakeMessage,
    sendHandle: undefined,
    options: undefined,
    callback: (error: Error | null) => void,
  ): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

/** A worker as the primary sees it: `cluster.Worker`. */
export interface ChannelToWorker {
  isConnected(): boolean;
  send(message: DecisionMessage, sendHandle: undefined, callback: (error: Error | null) => void): boolean;
}

const isMessage = <M extends { type: string; id: number }>(type: M['type'], message: unknown): message is M =>
  typeof message === 'object' &&
  message !== null &&
  (message as M).type === type &&
  typeof (message as M).id === 'number';

/**
 * A worker's limiter. When the primary does not answer in time (or the channel is gone) the worker
 * decides with `fallback`, a limiter of its own: the API stays up, and the limit still holds per
 * worker (so at most N× the limit with N workers) until the primary answers again.
 */
export function createWorkerRateLimiter(
  fallback: RateLimiter,
  channel: ChannelToPrimary,
  timeoutMs = PRIMARY_ANSWER_TIMEOUT_MS,
): RateLimiter {
  const pending = new Map<number, (decision: RateLimitDecision) => void>();
  let lastId = 0;
  channel.on('message', (message) => {
    if (isMessage<DecisionMessage>(DECISION, message)) pending.get(message.id)?.(message.decision);
  });

  return {
    take: (key, policy) =>
      new Promise((resolve, reject) => {
        lastId = lastId === Number.MAX_SAFE_INTEGER ? 1 : lastId + 1;
        const id = lastId;
        const settle = (decision: RateLimitDecision) => {
          clearTimeout(timer);
          pending.delete(id);
          resolve(decision);
        };
        const decideLocally = () => {
          if (!pending.delete(id)) return;
          clearTimeout(timer);
          fallback.take(key, policy).then(resolve, reject);
        };
        const timer = setTimeout(decideLocally, timeoutMs);
        pending.set(id, settle);
        channel.send({ type: TAKE, id, key, policy }, undefined, undefined, (error) => {
          if (error) decideLocally();
        });
      }),
  };
}

/** The primary's side: answers every worker's request for a token from `limiter`, the one set of buckets. */
export function serveRateLimitsToWorkers(
  cluster: { on(event: 'message', listener: (worker: ChannelToWorker, message: unknown) => void): unknown },
  limiter: RateLimiter,
): void {
  cluster.on('message', (worker, message) => {
    if (!isMessage<TakeMessage>(TAKE, message)) return;
    void limiter.take(message.key, message.policy).then((decision) => {
      // A worker that died meanwhile has no one waiting for the answer.
      if (worker.isConnected()) worker.send({ type: DECISION, id: message.id, decision }, undefined, () => undefined);
    });
  });
}
