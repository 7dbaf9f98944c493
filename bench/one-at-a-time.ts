// The admin paths' latency: requests sent one after another from the bench process, each waited for
// however long it takes. wrk would give up on a search that walks 10 000 000 groups (its timeout),
// or drop it in flight when its time is up, and the server would go on with it under the next run.
import { send } from './processes.js';
import { concurrentFigures } from './sync-10k.js';
import { databaseCpuFigure, type DatabaseCpuCounter, type LoadFigures } from './wrk.js';

/** Requests measured at the least, however long they take. */
const MIN_REQUESTS = 5;
/** A request slower than this is an error (a walk of 10 000 000 groups takes some 20 s on the busy machine). */
const TIMEOUT_MS = 300_000;

/**
 * GETs of `paths` in turn with `token`, the next sent when the last is answered: `warmup` seconds
 * unrecorded, then at least `seconds` and MIN_REQUESTS requests, with the server's CPU per response.
 */
export async function measureOneAtATime(
  port: number,
  paths: string[],
  token: string,
  options: { seconds: number; warmup: number; serverCpuSeconds: () => number | null; databaseCpu?: DatabaseCpuCounter },
): Promise<LoadFigures> {
  let n = 0;
  const ask = async () => {
    const path = paths[n++ % paths.length]!;
    const started = performance.now();
    const status = await send(port, 'GET', path, { authorization: `Token ${token}` }, undefined, TIMEOUT_MS).then(
      (reply) => reply.status,
      () => 0,
    );
    return { ms: performance.now() - started, status };
  };
  const warm = performance.now() + options.warmup * 1000;
  while (performance.now() < warm) await ask();
  const databaseCpuSince = await options.databaseCpu?.();
  const cpuBefore = options.serverCpuSeconds();
  const started = performance.now();
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  while (latencies.length < MIN_REQUESTS || performance.now() - started < options.seconds * 1000) {
    const { ms, status } = await ask();
    latencies.push(ms);
    statusCodes[status] = (statusCodes[status] ?? 0) + 1;
  }
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = options.serverCpuSeconds();
  const databaseSeconds = await databaseCpuSince?.();
  return {
    ...concurrentFigures(latencies, statusCodes, seconds),
    cpuUsPerResponse:
      cpuBefore === null || cpuAfter === null ? null : Math.round(((cpuAfter - cpuBefore) * 1e6) / latencies.length),
    ...databaseCpuFigure(databaseSeconds, latencies.length),
  };
}
