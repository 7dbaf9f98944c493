/** The most lookups one batch carries; more in one turn go out as several batches. */
export const MAX_LOOKUPS_PER_BATCH = 64;

interface Pending<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Lookups that arrive in one turn of the event loop go to the database together, in one `run`: on
 * PostgreSQL one statement (one write to the socket, one read) for all of them instead of one each,
 * on SQLite one read transaction (one lock of the WAL); and the work of a turn's requests runs
 * together rather than interleaved, which keeps the processor's caches warm (docs/performance.md). Each caller still gets exactly its own answer, read after its request arrived: a batch
 * is run at the end of the turn in which its lookups were asked for (setImmediate), never earlier.
 * A failed run fails every lookup it carried, as their own reads would have.
 *
 * `run` answers the items in the order it got them.
 */
export function lookupBatch<I, R>(run: (items: I[]) => Promise<R[]>): (item: I) => Promise<R> {
  let pending: Array<Pending<I, R>> = [];

  const send = (batch: Array<Pending<I, R>>) => {
    // Through a promise, so that a `run` that throws at once fails its lookups rather than the turn.
    Promise.resolve(batch.map((entry) => entry.item))
      .then(run)
      .then(
        (results) => batch.forEach((entry, index) => entry.resolve(results[index]!)),
        (error: unknown) => batch.forEach((entry) => entry.reject(error)),
      );
  };

  const flush = () => {
    const batch = pending;
    pending = [];
    for (let start = 0; start < batch.length; start += MAX_LOOKUPS_PER_BATCH)
      send(batch.slice(start, start + MAX_LOOKUPS_PER_BATCH));
  };

  return (item) =>
    new Promise<R>((resolve, reject) => {
      if (pending.length === 0) setImmediate(flush);
      pending.push({ item, resolve, reject });
    });
}
