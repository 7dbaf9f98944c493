// scripts/audit.js, CI's dependency audit, against a stand-in `npm` on PATH that prints a given
// `npm audit --json` answer: it fails on high and critical advisories and on unreadable answers, and
// passes, loudly, only when the audit endpoint could not be reached.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const AUDIT_SCRIPT = fileURLToPath(new URL('../../scripts/audit.js', import.meta.url));
const fakeBin = mkdtempSync(join(tmpdir(), 'ugs-fake-npm-'));

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
  /** The arguments the script gave npm. */
  npmArgs: string[];
}

/** Runs the audit script with an `npm` that prints `answer` and exits with `npmExit`. */
function auditWith(answer: string, npmExit = 1): Promise<Outcome> {
  writeFileSync(join(fakeBin, 'answer.json'), answer);
  writeFileSync(
    join(fakeBin, 'npm'),
    `#!/bin/sh\nprintf '%s\\n' "$@" > "${fakeBin}/args"\ncat "${fakeBin}/answer.json"\nexit ${npmExit}\n`,
  );
  chmodSync(join(fakeBin, 'npm'), 0o755);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [AUDIT_SCRIPT],
      { env: { ...process.env, PATH: `${fakeBin}${delimiter}${process.env.PATH}` } },
      (error, stdout, stderr) => {
        const npmArgs = readFileSync(join(fakeBin, 'args'), 'utf8')
          .split('\n')
          .filter((arg) => arg !== '');
        resolve({ code: error ? Number(error.code) : 0, stdout, stderr, npmArgs });
      },
    );
  });
}

function report(
  counts: Partial<Record<'info' | 'low' | 'moderate' | 'high' | 'critical', number>>,
  vulnerabilities: Record<string, unknown> = {},
): string {
  const all = { info: 0, low: 0, moderate: 0, high: 0, critical: 0, ...counts };
  const total = Object.values(all).reduce((sum, count) => sum + count, 0);
  return JSON.stringify({
    auditReportVersion: 2,
    vulnerabilities,
    metadata: { vulnerabilities: { ...all, total }, dependencies: { total: 300 } },
  });
}

const vulnerability = (name: string, severity: string) => ({
  name,
  severity,
  isDirect: false,
  range: '<2.0.0',
  nodes: [`node_modules/${name}`],
  fixAvailable: true,
  via: [
    {
      source: 1,
      name,
      title: `Prototype pollution in ${name}`,
      url: `https://github.com/advisories/GHSA-${name}`,
      severity,
      range: '<2.0.0',
    },
  ],
});

afterAll(() => rmSync(fakeBin, { recursive: true, force: true }));

describe('scripts/audit.js', () => {
  it('asks npm for a JSON audit explicitly (a user config may turn audits off) and passes a clean one', async () => {
    const outcome = await auditWith(report({}), 0);
    expect(outcome.npmArgs).toEqual(['audit', '--audit=true', '--json']);
    expect(outcome).toMatchObject({ code: 0, stderr: '' });
    expect(outcome.stdout).toMatch(/no high or critical advisory/);
  });

  it('passes low and moderate advisories', async () => {
    const outcome = await auditWith(report({ low: 1, moderate: 2 }, { quiet: vulnerability('quiet', 'moderate') }));
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stdout).toMatch(/2 moderate/);
  });

  it.each(['high', 'critical'])('fails on a %s advisory, naming the package and the advisory', async (severity) => {
    const outcome = await auditWith(
      report(
        { [severity]: 1, low: 1 },
        { 'left-pad': vulnerability('left-pad', severity), quiet: vulnerability('quiet', 'low') },
      ),
    );
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain(
      `left-pad (${severity}, <2.0.0): Prototype pollution in left-pad https://github.com/advisories/GHSA-left-pad`,
    );
    expect(outcome.stderr).not.toContain('quiet (');
  });

  it.each([
    ['answers 405', '405 Method Not Allowed - POST https://registry.npmjs.org/-/npm/v1/security/advisories/bulk'],
    [
      'cannot be connected to',
      'request to http://127.0.0.1:1/-/npm/v1/security/advisories/bulk failed, reason: connect ECONNREFUSED 127.0.0.1:1',
    ],
  ])('passes, with a BLOCKED line on stderr, when the audit endpoint %s', async (_label, message) => {
    const outcome = await auditWith(JSON.stringify({ message, error: { summary: '', detail: '' } }));
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toContain(`BLOCKED: npm audit endpoint unreachable (${message})`);
    expect(outcome.stdout).toBe('');
  });

  it.each([
    [
      'an npm error that is not about the network',
      JSON.stringify({ error: { code: 'ENOLOCK', summary: 'This command requires an existing lockfile.' } }),
    ],
    ['output that is not JSON', 'npm ERR! something else'],
  ])('fails on %s', async (_label, answer) => {
    const outcome = await auditWith(answer);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/^npm audit: /);
    expect(outcome.stderr).not.toContain('BLOCKED');
  });
});
