#!/usr/bin/env node
// CI's dependency audit (`npm run audit:ci`, called by .ci/run after `npm ci`): `npm audit` over the
// whole tree, production and development dependencies alike (both run in CI). Fails on any high or
// critical advisory, and on any audit that cannot be read. Only when npm could not get an answer from
// the registry's audit endpoint (a network policy outside the project's reach) does it pass, with a
// loud BLOCKED line on stderr so that nobody mistakes it for a clean audit.
import { spawnSync } from 'node:child_process';

const FAILING_SEVERITIES = ['high', 'critical'];
/** The registry's audit endpoints; npm names the one it failed to reach in its error message. */
const AUDIT_ENDPOINT = '/-/npm/v1/security/';

// ~/.npmrc may say audit=false; this audit is asked for on purpose.
const audit = spawnSync('npm', ['audit', '--audit=true', '--json'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

function fail(message) {
  process.stderr.write(`npm audit: ${message}\n`);
  process.exit(1);
}

let report;
try {
  report = JSON.parse(audit.stdout);
} catch {
  fail(
    `could not read its output (exit ${audit.status ?? audit.signal ?? audit.error?.message}):\n${audit.stdout}${audit.stderr}`,
  );
}

const counts = report.metadata?.vulnerabilities;
if (counts === undefined) {
  if (typeof report.message === 'string' && report.message.includes(AUDIT_ENDPOINT)) {
    process.stderr.write(
      `BLOCKED: npm audit endpoint unreachable (${report.message}). Dependencies were NOT audited.\n`,
    );
    process.exit(0);
  }
  fail(`no audit report:\n${JSON.stringify(report.error ?? report, null, 2)}`);
}

const failing = Object.values(report.vulnerabilities ?? {}).filter((vulnerability) =>
  FAILING_SEVERITIES.includes(vulnerability.severity),
);
const summary = Object.entries(counts)
  .map(([severity, count]) => `${count} ${severity}`)
  .join(', ');
if (failing.length > 0) {
  const lines = failing.map((vulnerability) => {
    const advisories = vulnerability.via.map((via) =>
      typeof via === 'string' ? `via ${via}` : `${via.title} ${via.url}`,
    );
    return `  ${vulnerability.name} (${vulnerability.severity}, ${vulnerability.range}): ${advisories.join('; ')}`;
  });
  fail(
    `high or critical advisories (${summary}):\n${lines.join('\n')}\nFix with \`npm audit fix\` or an update, then commit the lockfile.`,
  );
}
process.stdout.write(`npm audit: no high or critical advisory (${summary}).\n`);
