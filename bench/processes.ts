import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpus } from 'node:os';
import { freePort } from '../test/support/free-port.js';

export { freePort };

/** Every child this run started and that has not exited yet: killed on any way out. */
const running = new Set<ChildProcess>();

/** Last resort (process 'exit', a signal): SIGKILL every child still running. Synchronous. */
export function killChildrenNow(): void {
  for (const child of running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  running.clear();
}

process.on('exit', killChildrenNow);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One request to 127.0.0.1 (node:http, so GET may carry a body, as the API wants). */
export function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
  timeoutMs = 5000,
): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: payload
          ? { ...headers, 'content-type': 'application/json', 'content-length': String(payload.length) }
          : headers,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

export interface Child {
  name: string;
  pid: number;
  port: number;
  /** The last 64 KiB the process wrote to stdout and stderr, for error messages. */
  output(): string;
  /** Resident set size from /proc/<pid>/status (VmRSS), in MiB; null where /proc is not there. */
  rssMb(): number | null;
  /** CPU seconds the process has used so far (user + system, /proc/<pid>/stat); null where /proc is not there. */
  cpuSeconds(): number | null;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves once it is gone. */
  stop(graceMs?: number): Promise<void>;
}

const OUTPUT_KEPT = 64 * 1024;
const START_TIMEOUT_MS = 60_000;
const POLL_MS = 100;

export function rssMbOf(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round((Number(match[1]) / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

const CLOCK_TICKS_PER_SECOND = 100;

export function cpuSecondsOf(pid: number): number | null {
  try {
    // Fields after the command name (which may hold spaces, hence the last ')'): utime is the 12th, stime the 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/**
 * Starts `node <args>` and waits until GET `readyPath` on 127.0.0.1:`port` answers 200. Throws (and
 * kills the child) when it exits first or is not ready within a minute.
 */
export async function startNodeProcess(options: {
  name: string;
  args: string[];
  port: number;
  readyPath: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
}): Promise<Child> {
  const child = spawn(process.execPath, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`could not start ${options.name}`);
  running.add(child);
  const pid = child.pid;
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exitCode: number | string | null | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitCode = code ?? signal;
      running.delete(child);
      resolve();
    });
  });

  const stop = async (graceMs = 15_000): Promise<void> => {
    if (exitCode !== undefined) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  };

  const handle: Child = {
    name: options.name,
    pid,
    port: options.port,
    output: () => output,
    rssMb: () => rssMbOf(pid),
    cpuSeconds: () => cpuSecondsOf(pid),
    stop,
  };
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`${options.name} exited (${exitCode}) before it was ready:\n${output}`);
    const reply = await send(options.port, 'GET', options.readyPath).catch(() => null);
    if (reply?.status === 200) return handle;
    await sleep(POLL_MS);
  }
  await stop(2000);
  throw new Error(`${options.name} was not ready within ${START_TIMEOUT_MS / 1000} s:\n${output}`);
}

/**
 * The servers' processes on the last CPU and this one (and so the load generator it starts) on the
 * others, while two servers are compared (usage cost, two builds): a process that moves between CPUs, or shares one with the
 * load, varies more from window to window than counting costs. Undone by the function it returns.
 * Without taskset (util-linux), or on one CPU, nothing is pinned.
 */
export function pinApart(serverPids: number[]): () => void {
  const last = cpus().length - 1;
  const pin = (cpuList: string, pid: number) =>
    spawnSync('taskset', ['--all-tasks', '--cpu-list', '-p', cpuList, String(pid)], { stdio: 'ignore' }).status === 0;
  if (last < 1 || !serverPids.every((pid) => pin(String(last), pid))) return () => undefined;
  pin(last === 1 ? '0' : `0-${last - 1}`, process.pid);
  return () => void pin(`0-${last}`, process.pid);
}
