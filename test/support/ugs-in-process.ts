// `ugs <args>` run inside the test's own process through the commander program (src/cli/main.ts's
// `main`), with what a spawned `node bin/ugs.js` would see and give: an environment without any
// UGS_* variable but the test's (rate limiting off), the working directory, stdin, and its stdout,
// stderr and exit code captured. A spawn costs about 0.6 s of Node start-up per command; this costs
// milliseconds, so the CLI suites run their commands here and keep real processes (runUgs) for what
// only a process shows: `serve` (which runs until stopped), a read of file descriptor 0, start-up,
// signals and the bin script.
// Commands run one at a time: stdout, stderr, the environment and the working directory are the
// process's own, so two overlapping commands would mix them.
import { Readable } from 'node:stream';
import { REPO, runUgs, ugsEnv, type RunOptions, type RunResult } from './ugs-command.js';

let queue: Promise<unknown> = Promise.resolve();

/** Runs `ugs <args>` in this process (see above); `serve` and `embed-tokens` given `input` still get a real process. */
export function runUgsInProcess(args: string[], options: RunOptions = {}): Promise<RunResult> {
  // `serve` that starts runs until a signal, and `embed-tokens … -` reads file descriptor 0 itself
  // rather than process.stdin: only a process can show those.
  if (args[0] === 'serve' || (args[0] === 'embed-tokens' && options.input !== undefined)) return runUgs(args, options);
  const result = queue.then(() => runNow(args, options));
  queue = result.catch(() => undefined);
  return result;
}

type Write = typeof process.stdout.write;

async function runNow(args: string[], options: RunOptions): Promise<RunResult> {
  const { main } = await import('../../src/cli/main.js');
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const capture =
    (sink: Buffer[]): Write =>
    (chunk: string | Uint8Array, encoding?: BufferEncoding | ((error?: Error | null) => void), done?: () => void) => {
      sink.push(
        typeof chunk === 'string'
          ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8')
          : Buffer.from(chunk),
      );
      const callback = typeof encoding === 'function' ? encoding : done;
      if (callback) process.nextTick(callback);
      return true;
    };

  const saved = {
    env: { ...process.env },
    cwd: process.cwd(),
    exitCode: process.exitCode,
    stdoutWrite: process.stdout.write,
    stderrWrite: process.stderr.write,
    stdoutTty: Object.getOwnPropertyDescriptor(process.stdout, 'isTTY'),
    stderrTty: Object.getOwnPropertyDescriptor(process.stderr, 'isTTY'),
    stdin: Object.getOwnPropertyDescriptor(process, 'stdin')!,
    disconnect: process.disconnect,
  };
  const env = ugsEnv(options.env);
  for (const name of Object.keys(process.env)) if (!(name in env)) delete process.env[name];
  Object.assign(process.env, env);
  process.chdir(options.cwd ?? REPO);
  process.exitCode = undefined;
  // A spawned command writes to pipes, not a terminal: no colours, progress bars or wrapping.
  Object.defineProperty(process.stdout, 'isTTY', { value: false, configurable: true, writable: true });
  Object.defineProperty(process.stderr, 'isTTY', { value: false, configurable: true, writable: true });
  process.stdout.write = capture(out);
  process.stderr.write = capture(err);
  // As with runUgs: `input` then end of file, or a stdin left open and empty.
  const stdin =
    options.input === undefined ? new Readable({ read: () => undefined }) : Readable.from([Buffer.from(options.input)]);
  Object.defineProperty(process, 'stdin', { value: stdin, configurable: true, writable: true });
  // main() lets go of a cluster primary's channel on failure; a spawned command has none, and the
  // channel here is the test runner's own.
  process.disconnect = () => undefined;
  try {
    await main(['node', 'ugs', ...args]);
    const code = typeof process.exitCode === 'number' ? process.exitCode : Number(process.exitCode ?? 0);
    return { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
  } finally {
    process.stdout.write = saved.stdoutWrite;
    process.stderr.write = saved.stderrWrite;
    restoreProperty(process.stdout, 'isTTY', saved.stdoutTty);
    restoreProperty(process.stderr, 'isTTY', saved.stderrTty);
    Object.defineProperty(process, 'stdin', saved.stdin);
    process.disconnect = saved.disconnect;
    process.exitCode = saved.exitCode;
    process.chdir(saved.cwd);
    for (const name of Object.keys(process.env)) if (!(name in saved.env)) delete process.env[name];
    Object.assign(process.env, saved.env);
  }
}

function restoreProperty(target: object, name: string, descriptor: PropertyDescriptor | undefined): void {
  if (descriptor) Object.defineProperty(target, name, descriptor);
  else delete (target as Record<string, unknown>)[name];
}
