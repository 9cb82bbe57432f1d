// One page of the job list, newest first, that costs the same at a million jobs as at a
// thousand. A status filter alone is served by the store (an index, or a walk in id order
// it chooses from the counters), and so are an event's or a batch's jobs (their indexes). Filters no index serves (type, queue, source, error
// text) would read the whole table for a value that matches nothing, so such a page reads
// id ranges instead, newest first, and stops when the page is full or its time is spent;
// the page then offers to go on searching below where it stopped.

import type { Job } from '../core/types.js';
import type { Mailroom } from '../mailroom.js';
import type { JobFilter } from '../store/store.js';

/** Ids read per range: about 10 ms of table on either store. */
const SEARCH_RANGE_IDS = 20_000n;
/** Time a page may spend searching before it answers with what it found. */
const SEARCH_BUDGET_MS = 40;

export interface JobsPageResult {
  readonly jobs: Job[];
  /** The cursor of the page below this one; null when nothing is left below. */
  readonly nextAfter: string | null;
  /** True when the page stopped because its time was spent, not because it was full. */
  readonly searchStopped: boolean;
}

/** True when a filter needs a column no index serves (see above). */
function needsRanges(filter: JobFilter): boolean {
  return Boolean(filter.type || filter.queue || filter.source || filter.errorContains) && !filter.eventId && !filter.batchId;
}

/**
 * The newest `pageSize` jobs matching `filter` below `after` (all when undefined).
 * @example const page = await jobsPage(mr, { status: 'dead', errorContains: 'smtp' }, undefined, 50);
 */
export async function jobsPage(mr: Pick<Mailroom, 'listJobs'>, filter: JobFilter, after: string | undefined, pageSize: number): Promise<JobsPageResult> {
  if (!needsRanges(filter)) {
    const rows = await mr.listJobs({ ...filter, after, descending: true, limit: pageSize + 1 });
    const jobs = rows.slice(0, pageSize);
    return { jobs, nextAfter: rows.length > pageSize ? jobs[jobs.length - 1]!.id : null, searchStopped: false };
  }
  let upper: bigint;
  if (after !== undefined) upper = BigInt(after);
  else {
    const [newest] = await mr.listJobs({ descending: true, limit: 1 });
    if (!newest) return { jobs: [], nextAfter: null, searchStopped: false };
    upper = BigInt(newest.id) + 1n;
  }
  const deadline = performance.now() + SEARCH_BUDGET_MS;
  const found: Job[] = [];
  // Each range is lower < id < upper; the next one starts just below it.
  while (upper > 1n) {
    const lower = upper - SEARCH_RANGE_IDS > 0n ? upper - SEARCH_RANGE_IDS : 0n;
    const rows = await mr.listJobs({ ...filter, after: upper.toString(), until: lower.toString(), descending: true, limit: pageSize + 1 - found.length });
    found.push(...rows);
    if (found.length > pageSize) {
      const jobs = found.slice(0, pageSize);
      return { jobs, nextAfter: jobs[jobs.length - 1]!.id, searchStopped: false };
    }
    upper = lower + 1n;
    if (upper > 1n && performance.now() >= deadline) return { jobs: found, nextAfter: upper.toString(), searchStopped: true };
  }
  return { jobs: found, nextAfter: null, searchStopped: false };
}
