#!/usr/bin/env node
// `npm start [-- <ugs serve flags>]`: builds only when the build is out of date
// (scripts/build-freshness.js), then runs `ugs serve`. Node cannot exec, so the build and then the
// server run as children: SIGTERM, SIGINT and SIGHUP are passed on to the one running, and this
// process exits as it does. package.json's `exec node scripts/start.js` makes this script npm's own
// child (no shell in between), so the signal npm passes on when a supervisor stops `npm start`
// reaches the server, which drains and exits.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isBuildFresh } from './build-freshness.js';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'];

let current;
let stopped = false;
for (const signal of SIGNALS)
  process.on(signal, () => {
    stopped = true;
    current?.kill(signal);
  });

/** Runs a child to its end: resolves with its exit code, or the signal that ended it. */
function run(command, args) {
  current = spawn(command, args, { cwd: root, stdio: 'inherit' });
  return new Promise((resolve, reject) => {
    current.once('error', reject);
    current.once('exit', (code, signal) => resolve({ code, signal }));
  });
}

/** Exits as the child did: with its code, or by the same signal. */
function exitAs({ code, signal }) {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else process.exit(code ?? 1);
}

async function main() {
  if (isBuildFresh(root)) {
    process.stderr.write('npm start: the build is up to date\n');
  } else {
    process.stderr.write('npm start: building (sources changed since the last build)\n');
    // The build stamps itself when it succeeds (scripts/build-stamp.js).
    const build = await run('npm', ['run', 'build', '--silent']);
    if (build.code !== 0 || stopped) return build.code === 0 ? { code: 1 } : build;
  }
  if (stopped) return { code: 1 };
  return run(process.execPath, [join(root, 'bin', 'ugs.js'), 'serve', ...process.argv.slice(2)]);
}

exitAs(await main());
