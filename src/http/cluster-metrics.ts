import type { Cluster } from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

/*
 * /metrics under `ugs serve --workers N`: a scrape reaches one worker, which asks the
 * primary; the primary collects every worker's registry (prom-client's cluster aggregation, over the
 * cluster's IPC channel) and answers one view of the whole server. Counters and histograms are summed
 * over the workers, so a scrape counts every request once whichever worker it reaches, and the
 * series never go back; gauges follow their metric's aggregator (prom-client's for the process
 * metrics: summed, the event loop lag averaged, the start time left out).
 */

const SCRAPE = 'ugs:metrics:scrape';
const TEXT = 'ugs:metrics:text';

/** Longer than prom-client's own 5 s wait for the workers' answers, so its error arrives first. */
const PRIMARY_ANSWER_TIMEOUT_MS = 6_000;

interface ScrapeMessage {
  type: typeof SCRAPE;
  id: number;
}

interface TextMessage {
  type: typeof TEXT;
  id: number;
  text?: string;
  error?: string;
}

const isMessage = <M extends { type: string; id: number }>(type: M['type'], message: unknown): message is M =>
  typeof message === 'object' &&
  message !== null &&
  (message as M).type === type &&
  typeof (message as M).id === 'number';

/** The primary's end: answers each worker's scrape with the figures of all workers. */
export function serveMetricsToWorkers(cluster: Cluster): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isMessage<ScrapeMessage>(SCRAPE, message)) return;
    const reply = (answer: Omit<TextMessage, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: TEXT, id: message.id, ...answer });
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
    );
  });
}

/**
 * A worker's end: offers `registry` to the primary's aggregation and returns the scrape of the whole
 * server, which rejects when the primary does not answer in time.
 */
export function scrapeThroughPrimary(registry: Registry, channel: NodeJS.Process): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one makes this process answer the primary's requests for its figures.
  new AggregatorRegistry();
  let nextId = 0;
  const waiting = new Map<number, (message: TextMessage) => void>();
  channel.on('message', (message: unknown) => {
    if (isMessage<TextMessage>(TEXT, message)) waiting.get(message.id)?.(message);
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error('the cluster primary did not answer the metrics scrape in time'));
      }, PRIMARY_ANSWER_TIMEOUT_MS);
      waiting.set(id, (message) => {
        clearTimeout(timer);
        waiting.delete(id);
        if (message.text === undefined) reject(new Error(message.error ?? 'the metrics aggregation failed'));
        else resolve(message.text);
      });
      channel.send?.({ type: SCRAPE, id } satisfies ScrapeMessage);
    });
}
