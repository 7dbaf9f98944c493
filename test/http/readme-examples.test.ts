// Issue 27, done-when 2: the README's examples run in order, as written, against a real server on a
// socket, on the engine of the vitest project (sqlite, postgres). A newcomer first pastes the
// first-start tokens file's "Try it" command, then the README's ```sh blocks one after the other in one
// shell; this test does the same with bash, replacing only what the README tells the reader to fill
// in (the address in `export UGS=…` and the file's Customer token in `export UGS_TOKEN=…`).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shapeMismatch, shellBlocks, shownSkeleton, type ReadmeStep } from '../support/readme-examples.js';
import { startServeProcess, stopAllServeProcesses, type ServeProcess } from '../support/serve-process.js';
import { createTestDatabase, type TestDatabase } from '../support/test-database.js';

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

describe("the README's examples, in order, as written", () => {
  let db: TestDatabase;
  let server: ServeProcess;

  beforeAll(async () => {
    db = await createTestDatabase();
    // What `npm start` runs once built: `ugs serve`, here on a port of its own and the test's database.
    server = await startServeProcess(db);
  });

  afterAll(async () => {
    await stopAllServeProcesses();
    await db?.drop();
  });

  it('the quickstart starts the server, then every command exits 0 and answers what the README shows', async () => {
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
  });
});
