// What usage counting costs, measured in one process: two servers of `ugs serve`'s own parts on one
// database, the first counting usage as `ugs serve` does by default, the second as with `--usage off`.
// bench/run.ts loads one at a time and reads this process's CPU: two processes of one build differ by
// more than the 3 % to be shown (their hash seeds, heaps and code layout differ), two servers in one
// process do not (docs/decisions.md, D425).
//
//   node --import tsx bench/usage-cost-host.ts <control port> <counting port> <off port> counting-first|counting-second -- <ugs serve flags>
//
// The server a process starts first costs a few percent more per response than its second, whether
// it counts or not (two counting servers show it too): bench/run.ts runs one host of each order.
//
// The control port answers GET /readyz once both listen; GET /flush once the counting server has
// written what it counted, with the CPU that took ({"cpuUs"}: bench/run.ts asks between windows, with
// no load running, so nothing else is in it); and GET /count-cost with what one count costs
// ({"nsPerCount"}: a recorder of its own, whose writes go nowhere, counting 10 000 groups a million
// times). The counting server's own timer is set past any run (--usage-flush-ms): the bench asks for
// each write, at the end of a window as long as `ugs serve`'s interval, as `ugs serve` makes them.
import { createServer, type ServerResponse } from 'node:http';
import { rateLimitOf, serveCommandWithOptions, type ServeFlags } from '../src/cli/serve-options.js';
import { openFor, publicUrlOf, serveOptions } from '../src/cli/serve-process.js';
import { startServer, type RunningServer } from '../src/server.js';
import type { Runtime } from '../src/runtime.js';
import { createUsageRecorder } from '../src/domain/usage/usage-counter.js';
import type { Tenant } from '../src/domain/tenancy.js';

const separator = process.argv.indexOf('--');
const [controlPort, countingPort, offPort] = process.argv.slice(2, 5).map(Number);
const order = process.argv[5];
if (
  separator !== 6 ||
  [controlPort, countingPort, offPort].some((port) => !Number.isInteger(port)) ||
  (order !== 'counting-first' && order !== 'counting-second')
) {
  process.stderr.write(
    'usage: usage-cost-host.ts <control port> <counting port> <off port> counting-first|counting-second -- <ugs serve flags>\n',
  );
  process.exit(2);
}
const serveFlags = process.argv.slice(separator + 1);

/** A server as `ugs serve <flags> --port <port> --usage <usage>` would start it in its one process. */
async function serve(port: number, usage: 'on' | 'off'): Promise<{ runtime: Runtime; server: RunningServer }> {
  let flags: ServeFlags | undefined;
  serveCommandWithOptions()
    .action((parsed: ServeFlags) => {
      flags = parsed;
    })
    .parse([...serveFlags, '--port', String(port), '--usage', usage], { from: 'user' });
  const runtime = await openFor(
    flags!,
    publicUrlOf(flags!, () => port),
    { serving: true },
  );
  return { runtime, server: await startServer(runtime, serveOptions(flags!, rateLimitOf(flags!))) };
}

const first = order === 'counting-first' ? await serve(countingPort!, 'on') : await serve(offPort!, 'off');
const second = order === 'counting-first' ? await serve(offPort!, 'off') : await serve(countingPort!, 'on');
const [counting, off] = order === 'counting-first' ? [first, second] : [second, first];
if (!counting.runtime.usage || off.runtime.usage) throw new Error('expected one server counting and one not');
const recorder = counting.runtime.usage;

/** One count (`read`, as get-existing makes; `verified` is the same work), in nanoseconds. */
function nsPerCount(): number {
  const probe = createUsageRecorder({
    store: { addUsage: async () => undefined, pruneUsage: async () => 0 },
    flushMs: 3_600_000,
  });
  const tenant: Tenant = { workspaceId: 1, environment: 'Customer' };
  const count = (times: number) => {
    for (let i = 0; i < times; i += 1) probe.read(tenant, i % 10_000);
  };
  count(100_000);
  const before = process.cpuUsage();
  count(1_000_000);
  const { user, system } = process.cpuUsage(before);
  const ns = (user + system) / 1000; // µs for a million counts: ns for one
  void probe.stop();
  return ns;
}

const json = (response: ServerResponse, body: object) =>
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));

const control = createServer((request, response) => {
  if (request.url === '/readyz') response.writeHead(200).end();
  else if (request.url === '/count-cost') json(response, { nsPerCount: nsPerCount() });
  else if (request.url === '/flush') {
    const before = process.cpuUsage();
    void recorder.flush().then(() => {
      const { user, system } = process.cpuUsage(before);
      json(response, { cpuUs: user + system });
    });
  } else response.writeHead(404).end();
});
control.listen(controlPort, '127.0.0.1');

process.once('SIGTERM', () => {
  control.close();
  void Promise.all([counting.server.stop(), off.server.stop()]).then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
