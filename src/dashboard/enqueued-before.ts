// "Jobs enqueued before a time" as a keyset cursor. No index serves created_at, and a
// filter on it over a million rows in id order would read every newer row first. But ids
// follow enqueue order (SPEC §4), so the jobs enqueued before T are the jobs below some
// id: a binary search over the id space finds it with about 60 indexed one-row probes
// (jobList with `after` and limit 1, the store's own keyset read), whatever the table's size.
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
  const [newest] = await store.jobList({ descending: true, limit: 1 });
  if (!newest) return '0';
  if (newest.createdAt < before) return (BigInt(newest.id) + 1n).toString();
  // Invariant: the newest job below `low` was enqueued before `before` (or there is none);
  // the newest below `high` was not.
  let low = 0n;
  let high = BigInt(newest.id) + 1n;
  while (high - low > 1n) {
    const middle = (low + high) / 2n;
    const [below] = await store.jobList({ after: middle.toString(), descending: true, limit: 1 });
    if (!below || below.createdAt < before) low = middle;
    else high = middle;
  }
  return low.toString();
}
