// Calls made in one turn of the event loop, answered by one call for all of them. The
// deliveries a claim starts ask for their starts in the same turn, and the responses that
// arrive together ask for their records in the same turn: one store call (one
// transaction; on PostgreSQL one round trip where each was three or four) for each group.

interface Waiting<I, O> {
  readonly item: I;
  readonly resolve: (result: O) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * A function of one item that waits, then answers every item asked for meanwhile with one
 * call of `many` (a result per item, in order). When `many` fails, every item of its batch
 * fails with that error.
 *
 * @param closes 'microtasks': the batch closes once the current microtasks have run, for
 *   calls made from one synchronous loop (the worker starts a claim's jobs in one). 'turn':
 *   at the end of the event-loop turn, for calls made from separate I/O callbacks (the
 *   responses that arrived together); a turn's wait is the price.
 */
export function turnBatch<I, O>(closes: 'microtasks' | 'turn', many: (items: I[]) => Promise<O[]>): (item: I) => Promise<O> {
  let waiting: Array<Waiting<I, O>> = [];
  const flush = () => {
    const batch = waiting;
    waiting = [];
    // Through a promise, so that a `many` that throws instead of rejecting fails its batch
    // too, rather than escaping as an uncaught exception and leaving every caller waiting.
    Promise.resolve(batch.map((entry) => entry.item))
      .then(many)
      .then(
        (results) => batch.forEach((entry, index) => entry.resolve(results[index]!)),
        (error: unknown) => batch.forEach((entry) => entry.reject(error)),
      );
  };
  return (item) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (waiting.length !== 1) return;
      if (closes === 'turn') setImmediate(flush);
      else queueMicrotask(flush);
    });
}
