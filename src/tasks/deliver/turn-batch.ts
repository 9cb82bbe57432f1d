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
 * A function of one item that waits for the end of the turn, then answers every item asked
 * for in it with one call of `many` (a result per item, in order). When `many` fails,
 * every item of its batch fails with that error.
 */
export function turnBatch<I, O>(many: (items: I[]) => Promise<O[]>): (item: I) => Promise<O> {
  let waiting: Array<Waiting<I, O>> = [];
  const flush = () => {
    const batch = waiting;
    waiting = [];
    many(batch.map((entry) => entry.item)).then(
      (results) => batch.forEach((entry, index) => entry.resolve(results[index]!)),
      (error: unknown) => batch.forEach((entry) => entry.reject(error)),
    );
  };
  return (item) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (waiting.length === 1) setImmediate(flush);
    });
}
