// The load generator: wrk, a native (C, epoll) HTTP benchmark, so that the two cores go to the
// servers under test rather than to a load generator written in Node. Each scenario is a small Lua
// program (scenarios.ts) that builds every request just before it is sent and may judge its answer.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LoadFigures {
  /** Seconds wrk actually ran. */
  seconds: number;
  /** Responses received (any status). */
  responses: number;
  /** 2xx responses with the expected outcome. */
  ok: number;
  /** ok ÷ seconds: the requests/s of the table. */
  okPerSecond: number;
  /** Latency of the responses, ms. */
  latencyMs: { p50: number; p90: number; p99: number; max: number; average: number };
  errors: {
    total: number;
    non2xx: number;
    /** 2xx with the wrong outcome (see WrkScenario.judge). */
    wrongOutcome: number;
    /** Socket errors (connect, read, write), timeouts included. */
    socket: number;
    timeouts: number;
  };
  statusCodes: Record<string, number>;
  /** The server's CPU time (user + system) per response over the measured run, µs; null when not measured. */
  cpuUsPerResponse: number | null;
  /** The database's CPU per response over the same run (PostgreSQL's backends), µs; absent when not measured. */
  databaseCpuUsPerResponse?: number;
}

/** Starts counting the database's CPU; the function it returns gives the seconds used since (postgres-backends.ts). */
export type DatabaseCpuCounter = () => Promise<() => Promise<number>>;

/** The database's CPU µs per response, when it was counted. */
export function databaseCpuFigure(
  seconds: number | undefined,
  responses: number,
): { databaseCpuUsPerResponse?: number } {
  return seconds === undefined || responses === 0
    ? {}
    : { databaseCpuUsPerResponse: Math.round((seconds * 1e6) / responses) };
}

/** What wrk sends, as Lua: `next_body()` returns the next request's body; `judge(body)` (optional) whether a 2xx answer had the expected outcome. */
export interface WrkScenario {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  headers: Record<string, string>;
  /** Lines the script reads into the global table `lines` before the run (bodies, tokens). */
  lines?: string[];
  /** Lua defining `next_body()` and, optionally, `judge(body)` (and `on_ok(body)` to learn from an answer). */
  lua: string;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

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

/** wrk from Debian's packages: installed on first use when the bench runs as root, else named. */
export function ensureWrk(): void {
  const found = () => spawnSync('sh', ['-c', 'command -v wrk'], { encoding: 'utf8' }).status === 0;
  if (found()) return;
  if (process.getuid?.() === 0) {
    process.stderr.write('installing wrk (apt-get install wrk)\n');
    const install = () => spawnSync('apt-get', ['install', '-y', '-qq', 'wrk'], { stdio: 'inherit' }).status === 0;
    if (!install()) {
      spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
      install();
    }
  }
  if (!found()) throw new Error('the bench needs wrk, a native HTTP load generator: apt-get install wrk');
}

const luaString = (text: string) => `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

/** The whole wrk script of a scenario: its Lua plus the request, the judging and a JSON summary. */
function script(scenario: WrkScenario, linesFile: string | undefined): string {
  const headers = Object.entries(scenario.headers)
    .map(([name, value]) => `[${luaString(name)}] = ${luaString(value)}`)
    .join(', ');
  return `
wrong = 0
statuses = {}
lines = {}
local method, path, headers = ${luaString(scenario.method)}, ${luaString(scenario.path)}, { ${headers} }
${linesFile ? `for line in io.lines(${luaString(linesFile)}) do lines[#lines + 1] = line end` : ''}
${scenario.lua}
request = function() return wrk.format(method, path, headers, next_body()) end
response = function(status, _, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status >= 200 and status < 300 then
    if judge and not judge(body) then wrong = wrong + 1 elseif on_ok then on_ok(body) end
  end
end
local threads = {}
setup = function(thread) threads[#threads + 1] = thread end
done = function(summary, latency)
  local all, bad = {}, 0
  for _, thread in ipairs(threads) do
    bad = bad + thread:get("wrong")
    for status, count in pairs(thread:get("statuses")) do all[tostring(status)] = (all[tostring(status)] or 0) + count end
  end
  local codes = {}
  for status, count in pairs(all) do codes[#codes + 1] = string.format('"%s":%d', status, count) end
  local e = summary.errors
  io.write(string.format('WRK_RESULT {"us":%d,"requests":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
    '"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%f,"wrong":%d,"codes":{%s}}\\n',
    summary.duration, summary.requests, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean, bad, table.concat(codes, ',')))
end
`;
}

interface WrkResult {
  us: number;
  requests: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  wrong: number;
  codes: Record<string, number>;
}

/** One wrk run of `seconds` with `connections` keep-alive connections on one thread. */
export async function drive(
  port: number,
  scenario: WrkScenario,
  connections: number,
  seconds: number,
): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'ugs-wrk-'));
  try {
    const linesFile = scenario.lines ? join(dir, 'lines.txt') : undefined;
    if (linesFile) writeFileSync(linesFile, `${scenario.lines!.join('\n')}\n`);
    const scriptFile = join(dir, 'scenario.lua');
    writeFileSync(scriptFile, script(scenario, linesFile));
    const args = [
      '-t1',
      `-c${connections}`,
      `-d${seconds}s`,
      '--timeout',
      '10s',
      '-s',
      scriptFile,
      `http://127.0.0.1:${port}`,
    ];
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 ? resolve(stdout) : reject(new Error(`wrk exited with ${code}: ${stderr || stdout}`)),
      );
    });
    const line = output.split('\n').find((text) => text.startsWith('WRK_RESULT '));
    if (!line) throw new Error(`wrk printed no result:\n${output}`);
    return JSON.parse(line.slice('WRK_RESULT '.length)) as WrkResult;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ms = (us: number) => Math.round(us / 10) / 100;

/** Runs `warmup` seconds unrecorded, then `seconds` measured, with `connections` keep-alive connections. */
export async function measure(
  port: number,
  scenario: WrkScenario,
  options: {
    connections: number;
    seconds: number;
    warmup: number;
    serverCpuSeconds?: () => number | null;
    databaseCpu?: DatabaseCpuCounter;
  },
  warmupScenario = scenario,
): Promise<LoadFigures> {
  if (options.warmup > 0) await drive(port, warmupScenario, options.connections, options.warmup);
  const databaseCpuSince = await options.databaseCpu?.();
  const cpuBefore = options.serverCpuSeconds?.() ?? null;
  const result = await drive(port, scenario, options.connections, options.seconds);
  const cpuAfter = options.serverCpuSeconds?.() ?? null;
  const databaseSeconds = await databaseCpuSince?.();
  const seconds = result.us / 1e6;
  const twoHundreds = Object.entries(result.codes).reduce(
    (sum, [code, count]) => (code.startsWith('2') ? sum + count : sum),
    0,
  );
  const responses = Object.values(result.codes).reduce((sum, count) => sum + count, 0);
  const ok = twoHundreds - result.wrong;
  const socket = result.connect + result.read + result.write + result.timeout;
  return {
    seconds,
    responses,
    ok,
    okPerSecond: seconds > 0 ? ok / seconds : 0,
    latencyMs: {
      p50: ms(result.p50),
      p90: ms(result.p90),
      p99: ms(result.p99),
      max: ms(result.max),
      average: ms(result.mean),
    },
    errors: {
      total: responses - twoHundreds + result.wrong + socket,
      non2xx: responses - twoHundreds,
      wrongOutcome: result.wrong,
      socket,
      timeouts: result.timeout,
    },
    statusCodes: result.codes,
    // CPU per response rather than per second: what the server's work costs, whatever else the two
    // shared cores were doing meanwhile (the load generator, PostgreSQL, other work on the machine).
    cpuUsPerResponse:
      cpuBefore === null || cpuAfter === null || responses === 0
        ? null
        : Math.round(((cpuAfter - cpuBefore) * 1e6) / responses),
    ...databaseCpuFigure(databaseSeconds, responses),
  };
}
