import cluster from 'node:cluster';
import { once } from 'node:events';
import { createLogger } from '../logger.js';
import { serveRateLimitsToWorkers } from '../rate-limit/cluster-rate-limiter.js';
import { createLocalRateLimiter } from '../rate-limit/rate-limiter.js';
import type { RateLimitPolicy } from '../rate-limit/token-bucket.js';
import { firstStartTokensFile, issueFirstStartTokens } from './first-start-tokens.js';
import type { ServeFlags } from './serve-options.js';
import { onStopSignal, openFor, publicUrlOf, warnAboutSetup } from './serve-process.js';

/** How much longer than a worker's drain the primary waits for it before killing it. */
const WORKER_EXIT_MARGIN_MS = 5_000;

/**
 * The cluster primary serves nothing itself: it migrates before any worker races to, forks the
 * workers (which share the listening socket), keeps the rate limit buckets of them all, restarts
 * one that dies, and on SIGTERM lets each drain before it exits.
 */
export async function superviseWorkers(flags: ServeFlags, rateLimit: RateLimitPolicy | 'off'): Promise<void> {
  const { serveMetricsToWorkers } = await import('../server.js');
  const log = createLogger(flags.logLevel);
  // The primary signs nothing (the workers serve); its runtime migrates and issues the first tokens.
  const runtime = await openFor(
    flags,
    publicUrlOf(flags, () => flags.port),
    { serving: false },
  );
  await warnAboutSetup(flags, runtime, log);
  if (rateLimit !== 'off') serveRateLimitsToWorkers(cluster, createLocalRateLimiter());
  serveMetricsToWorkers(cluster);
  let stopping = false;
  const listening = new Promise<number>((resolve, reject) => {
    let count = 0;
    cluster.on('listening', (_worker, address) => {
      count += 1;
      if (count === flags.workers) resolve(address.port);
    });
    cluster.on('exit', (worker, code, signal) => {
      if (stopping) return;
      if (count < flags.workers) {
        reject(new Error(`A worker exited (code ${code ?? signal}) before the server was up; see its error above.`));
        return;
      }
      log.error({ pid: worker.process.pid, code, signal }, 'worker died; starting another');
      cluster.fork();
    });
  });
  for (let i = 0; i < flags.workers; i += 1) cluster.fork();

  onStopSignal(async (signal) => {
    stopping = true;
    log.info({ signal }, 'stopping workers');
    const exits = Object.values(cluster.workers ?? {}).map(async (worker) => {
      if (!worker || worker.isDead()) return;
      const exited = once(worker, 'exit');
      worker.process.kill('SIGTERM');
      // A worker bounds its own drain; one stuck past it does not hold the whole server up.
      const stuck = setTimeout(() => worker.process.kill('SIGKILL'), flags.drainTimeoutMs + WORKER_EXIT_MARGIN_MS);
      await exited;
      clearTimeout(stuck);
    });
    await Promise.all(exits);
    await runtime.close();
  });

  try {
    const port = await listening;
    await issueFirstStartTokens(runtime, firstStartTokensFile(flags), `http://${flags.host}:${port}`, log);
    log.info({ workers: flags.workers, port }, 'all workers listening');
  } catch (error) {
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    await runtime.close();
    throw error;
  }
}
