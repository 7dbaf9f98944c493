// Where the time goes in a .cpuprofile (from `npm run bench -- --cpu-prof`), without a browser:
// self time by function, self time by package or file, and total time (callees included).
//
//   node --import tsx bench/profile-summary.ts bench/profiles/<run>/<engine-size>/*.cpuprofile [--top 25]
//
// Percentages are of the time the thread was not idle. Node's profiler samples wall-clock time, so
// on a busy machine a syscall during which the process was descheduled (writev, read) looks dearer
// than it is.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const IDLE = '(idle)';

function where(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(path);
  if (inModules) return `${inModules[1]}/${inModules[2]}`;
  const inRepo = /\/(dist|src|bench)\/(.*)$/.exec(path);
  if (inRepo) return `${inRepo[1]}/${inRepo[2]}`;
  return path || '(native)';
}

function packageOf(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(path);
  if (inModules) return inModules[1]!;
  const inRepo = /\/((?:dist|src|bench)\/.*)$/.exec(path);
  if (inRepo) return inRepo[1]!;
  return path || '(native / VM)';
}

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'}  ${where(url)}${url ? `:${lineNumber + 1}` : ''}`;
}

const add = (map: Map<string, number>, key: string, micros: number) => map.set(key, (map.get(key) ?? 0) + micros);

function summarize(file: string, top: number): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const nodesById = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

  const selfMicros = new Map<number, number>();
  profile.samples.forEach((nodeId, index) =>
    selfMicros.set(nodeId, (selfMicros.get(nodeId) ?? 0) + (profile.timeDeltas[index] ?? 0)),
  );

  let total = 0;
  let idle = 0;
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [nodeId, micros] of selfMicros) {
    const node = nodesById.get(nodeId)!;
    total += micros;
    if (node.callFrame.functionName === IDLE) {
      idle += micros;
      continue;
    }
    add(byFunction, label(node), micros);
    add(byPackage, packageOf(node.callFrame.url), micros);
    // A sample counts once for every distinct function on its stack.
    const seen = new Set<string>();
    for (let id: number | undefined = nodeId; id !== undefined; id = parentOf.get(id)) {
      const frame = nodesById.get(id)!;
      if (frame.callFrame.functionName === '(root)') continue;
      const key = label(frame);
      if (!seen.has(key)) {
        seen.add(key);
        add(inclusive, key, micros);
      }
    }
  }

  const busy = total - idle;
  const lines = [
    `${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s not idle (percentages are of that)`,
  ];
  const print = (title: string, entries: Map<string, number>) => {
    lines.push('', title);
    for (const [key, micros] of [...entries].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      lines.push(
        `${((micros / busy) * 100).toFixed(1).padStart(5)} %  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${key}`,
      );
    }
  };
  print('self time by function', byFunction);
  print('self time by package / file', byPackage);
  print('total time by function (callees included)', inclusive);
  return `${lines.join('\n')}\n`;
}

const { values, positionals: files } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' } },
});
const top = Number(values.top);
if (files.length === 0 || !Number.isInteger(top) || top < 1) {
  process.stderr.write('usage: profile-summary.ts <file.cpuprofile>... [--top 25]\n');
  process.exit(2);
}
process.stdout.write(files.map((file) => summarize(file, top)).join('\n'));
