// Runs the built `ugs` binary (bin/ugs.js → dist/) as a user would: a real process with an
// environment the test controls. `npm test` builds first; run `npm run build` before running such
// tests on their own.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const UGS_BIN = join(REPO, 'bin', 'ugs.js');

/** Throws unless dist/ is built; `what` names the tests that need it. */
export function requireBuild(what: string): void {
  if (!existsSync(join(REPO, 'dist', 'cli', 'main.js')))
    throw new Error(`dist/ is missing: run \`npm run build\` (or \`npm test\`, which builds) before ${what}.`);
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Added to a copy of this process's environment from which every UGS_* variable was removed. */
  env?: Record<string, string>;
  cwd?: string;
  /** Written to the command's stdin, which is then closed (left open and empty when absent). */
  input?: string;
}

/** The environment a test controls fully: no UGS_* leaks in from the shell, rate limiting off. */
export function ugsEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('UGS_')));
  return { ...env, UGS_RATE_LIMIT: 'off', ...extra };
}

/** Runs a command to its end and returns its exit code and output. */
export function run(file: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolvePromise) => {
    const child = execFile(
      file,
      args,
      { env: ugsEnv(options.env), cwd: options.cwd ?? REPO, timeout: 20_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolvePromise({ code, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** `ugs <args>` through bin/ugs.js with the running Node. */
export function runUgs(args: string[], options: RunOptions = {}): Promise<RunResult> {
  requireBuild('tests that run `ugs`');
  return run(process.execPath, [UGS_BIN, ...args], options);
}

/** The JSON a command printed on stdout; throws, showing its stderr, unless it exited 0. */
export function jsonOutput<T = unknown>(result: RunResult): T {
  if (result.code !== 0)
    throw new Error(`expected exit 0, got ${result.code}\nstderr:\n${result.stderr}\nstdout:\n${result.stdout}`);
  return JSON.parse(result.stdout) as T;
}

/** A failure as a user should see it: a non-zero exit, nothing on stdout, `message` on stderr and no stack trace. */
export function expectCleanFailure(result: RunResult, message: RegExp): void {
  expect({ ...result, code: result.code === 0 ? 'exit 0' : 'non-zero' }).toMatchObject({
    code: 'non-zero',
    stdout: '',
    stderr: expect.stringMatching(message),
  });
  expect(result.stderr).not.toMatch(/^\s+at /m);
}
