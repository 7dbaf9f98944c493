// The CPU of the PostgreSQL backends that serve the service, read from /proc: the database's share of a
// response, which the service's own CPU figure leaves out. The server must run on this machine, and
// the database must be the bench's own (createdb): every backend connected to it is counted.
import { cpuSecondsOf } from './processes.js';
import { withPostgresClient } from '../test/support/test-database.js';

/** CPU seconds of each backend connected to `url`'s database but the one asking, by process id. */
async function backendCpu(url: string): Promise<Map<number, number>> {
  const { rows } = await withPostgresClient(
    (client) =>
      client.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      ),
    url,
  );
  const seconds = new Map<number, number>();
  for (const { pid } of rows) {
    const cpu = cpuSecondsOf(pid);
    if (cpu !== null) seconds.set(pid, cpu);
  }
  return seconds;
}

/**
 * Starts counting the backends' CPU; the function it returns gives the CPU seconds they used since.
 * A backend that connected in between counts whole (it did all its work since); one that left in
 * between is not counted, so a pool that closes connections mid-run reads low (the service's pool
 * keeps them open while it is busy).
 */
export async function backendCpuCounter(url: string): Promise<() => Promise<number>> {
  const before = await backendCpu(url);
  return async () => {
    let seconds = 0;
    for (const [pid, cpu] of await backendCpu(url)) seconds += cpu - (before.get(pid) ?? 0);
    return seconds;
  };
}
