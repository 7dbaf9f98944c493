// The IPC protocol between cluster workers and the primary, over in-memory channels that deliver
// asynchronously as the real one does. The real cluster: test/scale/rate-limit-workers.test.ts.
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  createWorkerRateLimiter,
  serveRateLimitsToWorkers,
  type ChannelToPrimary,
  type ChannelToWorker,
} from '../../src/rate-limit/cluster-rate-limiter.js';
import { createLocalRateLimiter } from '../../src/rate-limit/rate-limiter.js';

const POLICY = { perSecond: 1, burst: 3 };
const STOPPED_CLOCK = () => 0;

/** A primary (an EventEmitter standing in for node:cluster) and a way to connect workers to it. */
function primaryWith(limiter = createLocalRateLimiter(STOPPED_CLOCK)) {
  const cluster = new EventEmitter();
  serveRateLimitsToWorkers(cluster, limiter);
  const connectWorker = (answering = true): { channel: ChannelToPrimary; sent: unknown[] } => {
    const toWorker = new EventEmitter();
    const sent: unknown[] = [];
    const worker: ChannelToWorker = {
      isConnected: () => true,
      send: (message, _handle, callback) => {
        setImmediate(() => {
          toWorker.emit('message', message);
          callback(null);
        });
        return true;
      },
    };
    const channel: ChannelToPrimary = {
      send: (message, _handle, _options, callback) => {
        sent.push(message);
        setImmediate(() => {
          if (answering) cluster.emit('message', worker, message);
          callback(null);
        });
        return true;
      },
      on: (event, listener) => toWorker.on(event, listener),
    };
    return { channel, sent };
  };
  return { connectWorker };
}

describe('rate limiting across cluster workers', () => {
  it('takes every token from the one set of buckets in the primary, whichever worker asks', async () => {
    const { connectWorker } = primaryWith();
    const fallback = createLocalRateLimiter(STOPPED_CLOCK);
    const first = createWorkerRateLimiter(fallback, connectWorker().channel);
    const second = createWorkerRateLimiter(fallback, connectWorker().channel);

    const decisions = await Promise.all(
      [first, second, first, second, first].map((worker) => worker.take('7', POLICY)),
    );
    expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, false, false]);
    // Another key has a bucket of its own, in the primary too.
    expect((await second.take('8', POLICY)).allowed).toBe(true);
  });

  it('matches each answer to its request when many are in flight', async () => {
    const { connectWorker } = primaryWith();
    const worker = createWorkerRateLimiter(createLocalRateLimiter(STOPPED_CLOCK), connectWorker().channel);
    const keys = Array.from({ length: 50 }, (_, index) => String(index % 5));
    const decisions = await Promise.all(keys.map((key) => worker.take(key, { perSecond: 1, burst: 10 })));
    // Each of the 5 keys was asked 10 times: each bucket counted down 9..0 on its own.
    for (let key = 0; key < 5; key += 1) {
      const remaining = decisions
        .filter((_, index) => keys[index] === String(key))
        .map((decision) => decision.remaining);
      expect(remaining.sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    }
  });

  it('decides with buckets of its own when the primary does not answer in time', async () => {
    const { connectWorker } = primaryWith();
    const { channel, sent } = connectWorker(false);
    const worker = createWorkerRateLimiter(createLocalRateLimiter(STOPPED_CLOCK), channel, 10);
    const decisions = [];
    for (let i = 0; i < 4; i += 1) decisions.push(await worker.take('7', POLICY));
    expect(sent).toHaveLength(4);
    expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, false]);
  });

  it('decides with buckets of its own at once when the channel is gone', async () => {
    const channel: ChannelToPrimary = {
      send: (_message, _handle, _options, callback) => {
        setImmediate(() => callback(new Error('channel closed')));
        return false;
      },
      on: () => undefined,
    };
    // A timeout far beyond the test's: only the send error can settle it in time.
    const worker = createWorkerRateLimiter(createLocalRateLimiter(STOPPED_CLOCK), channel, 3_600_000);
    expect(await worker.take('7', POLICY)).toMatchObject({ allowed: true, remaining: 2 });
  });
});
