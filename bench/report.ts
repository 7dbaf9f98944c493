import { cpus, loadavg, release, totalmem, type as osType } from 'node:os';
import type { LoadFigures } from './wrk.js';

export interface Row {
  engine: string;
  size: number;
  scenario: string;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** req/s ÷ the ceiling's req/s measured just before, on the same database block. */
  ratioToCeiling: number | null;
  /** req/s ÷ the bare Fastify route's req/s measured just before, on the same database block. */
  ratioToFastify: number | null;
  rssMb: number | null;
  /** The server's CPU µs per response (null where not measured: offline-verify, webhook-drain). */
  cpuUs: number | null;
  /** The database's CPU µs per response (PostgreSQL's backends), null where not measured (SQLite runs inside the service). */
  databaseCpuUs: number | null;
}

export function machine() {
  const all = cpus();
  return {
    os: `${osType()} ${release()}`,
    arch: process.arch,
    cpuModel: all[0]?.model ?? 'unknown',
    cpuCount: all.length,
    totalMemoryMb: Math.round(totalmem() / 1024 / 1024),
    node: process.version,
    loadAverageAtStart: loadavg().map((load) => Math.round(load * 100) / 100),
  };
}

export function row(
  engine: string,
  size: number,
  scenario: string,
  figures: LoadFigures,
  ceilingPerSecond: number | null,
  fastifyPerSecond: number | null,
  rssMb: number | null,
): Row {
  const ratio = (to: number | null) => (to ? Math.round((figures.okPerSecond / to) * 100) / 100 : null);
  return {
    engine,
    size,
    scenario,
    reqPerSec: Math.round(figures.okPerSecond),
    p50Ms: figures.latencyMs.p50,
    p99Ms: figures.latencyMs.p99,
    errors: figures.errors.total,
    ratioToCeiling: ratio(ceilingPerSecond),
    ratioToFastify: ratio(fastifyPerSecond),
    rssMb,
    cpuUs: figures.cpuUsPerResponse,
    databaseCpuUs: figures.databaseCpuUsPerResponse ?? null,
  };
}

const HEADINGS = [
  'engine',
  'size',
  'scenario',
  'req/s',
  'p50 ms',
  'p99 ms',
  'errors',
  '× node:http',
  '× Fastify',
  'CPU µs',
  'DB CPU µs',
  'RSS MB',
];

function cells(r: Row): string[] {
  return [
    r.engine,
    r.size.toLocaleString('en-US'),
    r.scenario,
    r.reqPerSec.toLocaleString('en-US'),
    String(r.p50Ms),
    String(r.p99Ms),
    String(r.errors),
    r.ratioToCeiling === null ? '–' : r.ratioToCeiling.toFixed(2),
    r.ratioToFastify === null ? '–' : r.ratioToFastify.toFixed(2),
    r.cpuUs === null ? '–' : String(r.cpuUs),
    r.databaseCpuUs === null ? '–' : String(r.databaseCpuUs),
    r.rssMb === null ? '–' : r.rssMb.toFixed(0),
  ];
}

/** A Markdown table, padded so it also reads well in a terminal. */
export function table(rows: Row[]): string {
  const body = rows.map(cells);
  const widths = HEADINGS.map((heading, column) =>
    Math.max(heading.length, ...body.map((line) => line[column]!.length)),
  );
  const numeric = (column: number) => column === 1 || column >= 3;
  const format = (line: string[]) =>
    `| ${line.map((cell, column) => (numeric(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!))).join(' | ')} |`;
  const rule = `|${widths.map((width, column) => (numeric(column) ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2))).join('|')}|`;
  return [format(HEADINGS), rule, ...body.map(format)].join('\n');
}
