// "Jobs enqueued before a time" as a keyset cursor. No index serves created_at, and a
// filter on it over a million rows in id order would read every newer row first. But ids
// follow enqueue order (SPEC §4), so the jobs enqueued before T are the jobs below some
// id, found by searching the id space with indexed one-row probes (jobList with `after`
// and limit 1, the store's own keyset read). Enqueue times grow about evenly with ids, so
// each probe guesses where T falls between the bounds (interpolation: a handful of probes
// at a million jobs, where halving took twenty, each a round trip to PostgreSQL); a guess
// that does not halve the range is followed by a halving step, so it never takes more
// than about twice as many probes as halving alone.
//
// PostgreSQL assigns ids before commit, so two transactions may commit slightly out of
// order; the cut is then exact to within those concurrent enqueues, which is what a time
// filter on a list needs.

import type { StoreExecutor } from '../store/store.js';

type Lister = Pick<StoreExecutor, 'jobList'>;

/**
 * The smallest id such that every job below it (and none at or above) was enqueued before
 * `before`, as a decimal string for `jobList({ after, descending: true })`; '0' when no
 * job was.
 */
export async function cursorEnqueuedBefore(store: Lister, before: Date): Promise<string> {
  const target = before.getTime();
  const [newest] = await store.jobList({ descending: true, limit: 1 });
  const [oldest] = await store.jobList({ limit: 1 });
  if (!newest || !oldest || oldest.createdAt.getTime() >= target) return '0';
  if (newest.createdAt.getTime() < target) return (BigInt(newest.id) + 1n).toString();
  // Invariant: the newest job below `low` was enqueued before `before` (or there is none);
  // the newest below `high` was not. `lowAt`/`highAt` place the bounds in time for the guess.
  let low = BigInt(oldest.id);
  let lowAt = oldest.createdAt.getTime();
  let high = BigInt(newest.id) + 1n;
  let highAt = newest.createdAt.getTime();
  let interpolate = true;
  while (high - low > 1n) {
    const width = high - low;
    let probe = (low + high) / 2n;
    if (interpolate && highAt > lowAt) {
      const share = (target - lowAt) / (highAt - lowAt);
      probe = low + BigInt(Math.round(Number(width) * Math.min(1, Math.max(0, share))));
      if (probe <= low) probe = low + 1n;
      if (probe >= high) probe = high - 1n;
    }
    const [below] = await store.jobList({ after: probe.toString(), descending: true, limit: 1 });
    const belowAt = below ? below.createdAt.getTime() : Number.NEGATIVE_INFINITY;
    if (belowAt < target) {
      low = probe;
      lowAt = belowAt;
    } else {
      high = probe;
      highAt = belowAt;
    }
    // A guess that left more than half the range is followed by a halving step.
    interpolate = (high - low) * 2n <= width;
  }
  return low.toString();
}
