import { readFileSync } from 'node:fs';
import { send } from './processes.js';

/**
 * What the service's resident memory is made of once its scenarios have run: the kernel's split
 * (anonymous pages: the V8 heap, malloc, SQLite's page cache; file-backed: the node binary and
 * libraries mapped in) and V8's own (its heap as reserved and as used, the young generation apart,
 * from prom-client's default metrics on /metrics). RSS alone cannot say whether a figure is live
 * data, a cache at its bound or heap V8 keeps for the next burst.
 */
export interface MemoryBreakdown {
  rssMb: number;
  anonymousMb: number;
  fileMb: number;
  heapTotalMb: number;
  heapUsedMb: number;
  /** The young generation (its two semi-spaces), part of heapTotalMb. */
  newSpaceMb: number;
  oldSpaceMb: number;
  /** Buffers and other memory V8 tracks outside its heap. */
  externalMb: number;
}

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

function statusKb(status: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
  return match ? Number(match[1]) : 0;
}

function metric(text: string, name: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : 0;
}

export async function memoryBreakdownOf(pid: number, port: number): Promise<MemoryBreakdown | null> {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const reply = await send(port, 'GET', '/metrics').catch(() => null);
  const text = reply?.status === 200 ? reply.body.toString('utf8') : '';
  return {
    rssMb: mb(statusKb(status, 'VmRSS') * 1024),
    anonymousMb: mb(statusKb(status, 'RssAnon') * 1024),
    fileMb: mb(statusKb(status, 'RssFile') * 1024),
    heapTotalMb: mb(metric(text, 'ugs_nodejs_heap_size_total_bytes')),
    heapUsedMb: mb(metric(text, 'ugs_nodejs_heap_size_used_bytes')),
    newSpaceMb: mb(metric(text, 'ugs_nodejs_heap_space_size_total_bytes{space="new"}')),
    oldSpaceMb: mb(metric(text, 'ugs_nodejs_heap_space_size_total_bytes{space="old"}')),
    externalMb: mb(metric(text, 'ugs_nodejs_external_memory_bytes')),
  };
}

export function describeMemory(memory: MemoryBreakdown): string {
  return (
    `RSS ${memory.rssMb} MB = ${memory.anonymousMb} anonymous + ${memory.fileMb} file-backed; ` +
    `V8 heap ${memory.heapTotalMb} MB reserved (young ${memory.newSpaceMb}, old ${memory.oldSpaceMb}), ` +
    `${memory.heapUsedMb} MB used; external ${memory.externalMb} MB`
  );
}
