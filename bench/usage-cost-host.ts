// What usage counting costs (docs/performance.md#usage-countings-cost): a server of `ugs serve`'s own parts whose counting the bench
// switches on and off between windows. bench/run.ts starts two such processes on one database, pins
// both to one CPU and loads them at the same time, one counting and one not, then the other way round:
// the machine's bursts then reach both alike, and what makes one process dearer than another of the
// same build (hash seeds, heap, code layout) is on each side once.
//
//   node --import tsx bench/usage-cost-host.ts <control port> <port> -- <ugs serve flags>
//
// The control port answers GET /readyz once the server listens; GET /counting/on and /counting/off;
// GET /flush once what was counted is written, with the CPU that took ({"cpuUs"}: bench/run.ts asks
// between windows, with no load running); and GET /count-cost with what one count costs
// ({"nsPerCount"}: a recorder of its own, whose writes go nowhere, counting 10 000 groups a million
// times). The server's own timer is set past any run (--usage-flush-ms): the bench asks for each write,
// at the end of each window.
import { createServer, type ServerResponse } from 'node:http';
import { rateLimitOf, serveCommandWithOptions, type ServeFlags } from '../src/cli/serve-options.js';
import { openFor, publicUrlOf, serveOptions } from '../src/cli/serve-process.js';
import { startServer } from '../src/server.js';
import { createUsageRecorder, NO_USAGE_COUNTING, type UsageCounter } from '../src/domain/usage/usage-counter.js';
import type { Tenant } from '../src/domain/tenancy.js';

const separator = process.argv.indexOf('--');
const [controlPort, port] = process.argv.slice(2, 4).map(Number);
if (separator !== 4 || [controlPort, port].some((value) => !Number.isInteger(value))) {
  process.stderr.write('usage: usage-cost-host.ts <control port> <port> -- <ugs serve flags>\n');
  process.exit(2);
}

let flags: ServeFlags | undefined;
serveCommandWithOptions()
  .action((parsed: ServeFlags) => {
    flags = parsed;
  })
  .parse([...process.argv.slice(separator + 1), '--port', String(port), '--usage', 'on'], { from: 'user' });
const runtime = await openFor(
  flags!,
  publicUrlOf(flags!, () => port!),
  { serving: true },
);
const recorder = runtime.usage;
if (!recorder) throw new Error('expected the server to count usage');
const server = await startServer(runtime, serveOptions(flags!, rateLimitOf(flags!)));

// The services hold the recorder itself: its three counting methods are swapped for those of
// `--usage off` while counting is off, so the hot path makes the same call either way.
const counting: UsageCounter = { minted: recorder.minted, verified: recorder.verified, read: recorder.read };

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

const countWith = (counter: UsageCounter, response: ServerResponse) => {
  Object.assign(recorder, counter);
  json(response, { counting: counter === counting });
};

const control = createServer((request, response) => {
  if (request.url === '/readyz') response.writeHead(200).end();
  else if (request.url === '/counting/on') countWith(counting, response);
  else if (request.url === '/counting/off') countWith(NO_USAGE_COUNTING, response);
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
  void server.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
