// The README's shell examples as steps a test can run in order, and the rule that says whether a
// response has the shape the README shows for it; expectReadmeExamplesToPass runs them all against a
// server (test/http/readme-examples.test.ts on the repository's build, test/release on the release).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { expect } from 'vitest';

/** One command of a ```sh block (continuation lines joined) and the response the README shows after it, if any. */
export interface ReadmeStep {
  command: string;
  /** `# {…}` (status 200) or `# 404 {…}` right after the command, `#  ` lines continuing it. */
  shown?: { status: number; body: string };
}

const SH_BLOCK = /^```sh\n([\s\S]*?)^```$/gm;
const SHOWN_START = /^# (?:(\d{3}) )?(\{.*)$/;
const SHOWN_CONTINUED = /^# {2}(.*)$/;

/** Every ```sh block of the Markdown text, each as its steps, in the order they appear. */
export function shellBlocks(markdown: string): ReadmeStep[][] {
  return [...markdown.matchAll(SH_BLOCK)].map((match) => blockSteps(match[1]!));
}

function blockSteps(block: string): ReadmeStep[] {
  const steps: ReadmeStep[] = [];
  const lines = block.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const start = SHOWN_START.exec(line);
      const last = steps.at(-1);
      // Other comments are prose; a response belongs to the command right above it.
      if (!start || !last || last.shown) continue;
      let body = start[2]!;
      while (index + 1 < lines.length && SHOWN_CONTINUED.test(lines[index + 1]!))
        body += SHOWN_CONTINUED.exec(lines[++index]!)![1];
      last.shown = { status: start[1] === undefined ? 200 : Number(start[1]), body };
      continue;
    }
    let command = line;
    while (command.endsWith('\\') && index + 1 < lines.length) command += '\n' + lines[++index];
    steps.push({ command });
  }
  return steps;
}

const ELIDED = '…';

/**
 * The response as shown, with `…` standing for "more of the same" made into JSON: a `…` between
 * fields or items drops out; a string with `…` in it stays, and stands for any string.
 */
export function shownSkeleton(shown: string): unknown {
  let out = '';
  let inString = false;
  for (let index = 0; index < shown.length; index++) {
    const char = shown[index]!;
    if (inString) {
      out += char;
      if (char === '\\') out += shown[++index] ?? '';
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
      out += char;
    } else if (char !== ELIDED) {
      out += char;
    }
  }
  const json = out
    .replace(/,\s*,/g, ',')
    .replace(/([{[])\s*,/g, '$1')
    .replace(/,\s*([}\]])/g, '$1');
  return JSON.parse(json) as unknown;
}

/**
 * Where `actual` does not have the shape of `skeleton`, the path and what differs; undefined when
 * it does. Objects: every key shown is there (more are fine). Arrays: the items shown match the
 * first items. Numbers: any number (ids differ from run to run). A string with `…`: any string.
 * Other strings, booleans and null: exactly that value.
 */
export function shapeMismatch(skeleton: unknown, actual: unknown, path = '$'): string | undefined {
  if (Array.isArray(skeleton)) {
    if (!Array.isArray(actual)) return `${path}: an array was shown, got ${JSON.stringify(actual)}`;
    for (const [index, item] of skeleton.entries()) {
      const mismatch = shapeMismatch(item, actual[index], `${path}[${index}]`);
      if (mismatch) return mismatch;
    }
    return undefined;
  }
  if (skeleton !== null && typeof skeleton === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return `${path}: an object was shown, got ${JSON.stringify(actual)}`;
    for (const [key, value] of Object.entries(skeleton)) {
      if (!(key in actual)) return `${path}.${key}: shown, but missing from ${JSON.stringify(actual)}`;
      const mismatch = shapeMismatch(value, (actual as Record<string, unknown>)[key], `${path}.${key}`);
      if (mismatch) return mismatch;
    }
    return undefined;
  }
  if (typeof skeleton === 'number')
    return typeof actual === 'number' ? undefined : `${path}: a number was shown, got ${JSON.stringify(actual)}`;
  if (typeof skeleton === 'string' && skeleton.includes(ELIDED))
    return typeof actual === 'string' ? undefined : `${path}: a string was shown, got ${JSON.stringify(actual)}`;
  return skeleton === actual
    ? undefined
    : `${path}: ${JSON.stringify(skeleton)} was shown, got ${JSON.stringify(actual)}`;
}

const run = promisify(execFile);
const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const STEP_END = '@@readme-step-end';
const STATUS_LINE = /^@@status (\d{3})$/gm;
/** Every curl of the examples also writes its HTTP status to stderr, where the test reads it. */
const CURL_WITH_STATUS = `curl() { command curl --write-out '%{stderr}@@status %{http_code}\\n' "$@"; }`;

/** The first-start tokens file's "Try it" command, as written (its address and token are the server's own). */
function tryItIn(text: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.trim() === 'Try it:');
  expect(start, `no "Try it:" in the first-start tokens file:\n${text}`).toBeGreaterThan(-1);
  const end = lines.findIndex((line, index) => index > start && /^=+$/.test(line));
  return lines.slice(start + 1, end).join('\n');
}

interface StepResult {
  step: ReadmeStep;
  exitCode: number;
  stdout: string;
  statuses: number[];
}

/** Runs the steps in one bash process, in order, and splits what it printed step by step. */
async function runInOneShell(steps: ReadmeStep[]): Promise<StepResult[]> {
  const script = [
    'set -o pipefail',
    CURL_WITH_STATUS,
    ...steps.flatMap(({ command }) => [command, `printf '\\n${STEP_END} %d\\n' $?`, `printf '${STEP_END}\\n' >&2`]),
  ].join('\n');
  const { stdout, stderr } = await run('bash', ['--noprofile', '--norc', '-c', script], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' },
    maxBuffer: 16 * 1024 * 1024,
  });
  const outputs = stdout.split(new RegExp(`\\n${STEP_END} (\\d+)\\n`));
  const errors = stderr.split(`${STEP_END}\n`);
  return steps.map((step, index) => ({
    step,
    stdout: outputs[index * 2]!.trim(),
    exitCode: Number(outputs[index * 2 + 1]),
    statuses: [...(errors[index] ?? '').matchAll(STATUS_LINE)].map((match) => Number(match[1])),
  }));
}

/** The server the examples run against: where it listens, its first-start tokens file and its Customer admin token. */
export interface ReadmeServer {
  baseUrl: string;
  firstStartText(): string | undefined;
  adminTokens(): { Customer: string };
}

/**
 * A newcomer first pastes the first-start tokens file's "Try it" command, then the README's ```sh blocks
 * (the quickstart aside) one after the other in one shell; this does the same with bash, replacing
 * only what the README tells the reader to fill in (the address in `export UGS=…` and the file's
 * Customer token in `export UGS_TOKEN=…`), and expects every command to exit 0 and answer what the
 * README shows.
 */
export async function expectReadmeExamplesToPass(server: ReadmeServer): Promise<void> {
  const [quickstart, ...blocks] = shellBlocks(README);
  expect(quickstart?.map((step) => step.command)).toEqual(['npm ci && npm start']);

  const fillIns = { UGS: server.baseUrl, UGS_TOKEN: server.adminTokens().Customer };
  const filled = new Set<string>();
  const readmeSteps = blocks.flat().map((step) => {
    const command = step.command.replace(/^export (UGS|UGS_TOKEN)=\S+/, (_, name: keyof typeof fillIns) => {
      filled.add(name);
      return `export ${name}=${fillIns[name]}`;
    });
    return { ...step, command };
  });
  expect([...filled].sort()).toEqual(['UGS', 'UGS_TOKEN']);
  expect(readmeSteps.filter((step) => step.shown).length).toBeGreaterThanOrEqual(8);

  const tryIt: ReadmeStep = {
    command: tryItIn(server.firstStartText() ?? ''),
    shown: { status: 200, body: '{"success":1}' },
  };
  const results = await runInOneShell([tryIt, ...readmeSteps]);

  for (const { step, exitCode, stdout, statuses } of results) {
    const context = `${step.command}\n→ exit ${exitCode}, statuses ${statuses.join(' ')}, output:\n${stdout}`;
    expect(exitCode, context).toBe(0);
    if (!step.shown) {
      // A command whose answer the README does not show (one that keeps a token in a variable) succeeds.
      expect(
        statuses.every((status) => status === 200),
        context,
      ).toBe(true);
      continue;
    }
    expect(statuses.at(-1), context).toBe(step.shown.status);
    const mismatch = shapeMismatch(shownSkeleton(step.shown.body), JSON.parse(stdout) as unknown);
    expect(mismatch, context).toBeUndefined();
  }
}
