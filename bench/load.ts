import autocannon from 'autocannon';
import type { Scenario } from './scenarios.js';

export interface LoadFigures {
  /** Seconds autocannon actually ran. */
  seconds: number;
  /** Responses received (any status). */
  responses: number;
  /** 2xx responses with the expected outcome. */
  ok: number;
  /** ok ÷ seconds: the requests/s of the table. */
  okPerSecond: number;
  /** Latency of 2xx responses, ms. */
  latencyMs: { p50: number; p90: number; p99: number; max: number; average: number };
  errors: {
    total: number;
    non2xx: number;
    /** 2xx with the wrong outcome (see Scenario.wrongOutcomes). */
    wrongOutcome: number;
    /** Socket errors, timeouts included. */
    socket: number;
    timeouts: number;
  };
  statusCodes: Record<string, number>;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** The latency figures of measurements taken in this process (ms, sorted ascending), to `digits` decimals. */
export function latencyFigures(sorted: number[], digits: number): LoadFigures['latencyMs'] {
  const round = (ms: number) => Math.round(ms * 10 ** digits) / 10 ** digits;
  return {
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted.at(-1) ?? 0),
    average: round(sorted.reduce((sum, ms) => sum + ms, 0) / Math.max(1, sorted.length)),
  };
}

export function drive(port: number, scenario: Scenario, connections: number, seconds: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const instance = autocannon(
      { url: `http://127.0.0.1:${port}`, connections, duration: seconds, timeout: 10, requests: scenario.requests },
      (error, result) => {
        settled = true;
        clearTimeout(guard);
        if (error) reject(error);
        else resolve(result);
      },
    );
    // autocannon stops itself after `seconds`; this only bounds a run that somehow does not.
    const guard = setTimeout(() => {
      if (!settled) instance.stop();
    }, (seconds + 30) * 1000);
  });
}

/** Runs `warmup` seconds unrecorded, then `seconds` measured, with `connections` keep-alive connections. */
export async function measure(port: number, scenario: Scenario, options: { connections: number; seconds: number; warmup: number }): Promise<LoadFigures> {
  if (options.warmup > 0) await drive(port, scenario, options.connections, options.warmup);
  scenario.resetCounters();
  const result = await drive(port, scenario, options.connections, options.seconds);
  const wrongOutcome = scenario.wrongOutcomes();
  const ok = result['2xx'] - wrongOutcome;
  const seconds = result.duration;
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]));
  const responses = Object.values(statusCodes).reduce((sum, count) => sum + count, 0);
  return {
    seconds,
    responses,
    ok,
    okPerSecond: seconds > 0 ? ok / seconds : 0,
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      average: result.latency.average,
    },
    errors: {
      total: result.non2xx + wrongOutcome + result.errors,
      non2xx: result.non2xx,
      wrongOutcome,
      socket: result.errors,
      timeouts: result.timeouts,
    },
    statusCodes,
  };
}
