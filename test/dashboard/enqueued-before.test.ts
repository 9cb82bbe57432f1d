// The time filter's cursor: over ids with gaps and uneven enqueue times, the search lands
// on the same cut as reading every job, in few probes.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/core/types.js';
import { cursorEnqueuedBefore } from '../../src/dashboard/enqueued-before.js';
import type { JobListParams } from '../../src/store/store.js';

/** A store of jobs given as [id, createdAtMs], ids ascending, times non-decreasing; counts its probes. */
function lister(rows: ReadonlyArray<readonly [number, number]>) {
  let probes = 0;
  return {
    get probes() {
      return probes;
    },
    async jobList(params: JobListParams): Promise<Job[]> {
      probes++;
      const after = params.after === undefined ? null : Number(params.after);
      const matching = params.descending
        ? [...rows].reverse().filter(([id]) => after === null || id < after)
        : rows.filter(([id]) => after === null || id > after);
      return matching.slice(0, params.limit ?? 100).map(([id, at]) => ({ id: String(id), createdAt: new Date(at) }) as Job);
    },
  };
}

describe('cursorEnqueuedBefore', () => {
  it('cuts where reading every job would, whatever the gaps and times', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 1_000 })), { maxLength: 60 }),
        fc.integer({ min: -10, max: 60_000 }),
        async (steps, before) => {
          let id = 0;
          let at = 0;
          const rows = steps.map(([gap, wait]) => [(id += gap), (at += wait)] as const);
          const cursor = await cursorEnqueuedBefore(lister(rows), new Date(before));
          // Every job below the cursor was enqueued before, none at or above it.
          for (const [jobId, jobAt] of rows) expect(jobId < Number(cursor)).toBe(jobAt < before);
        },
      ),
    );
  });

  it('takes a handful of probes over a million evenly enqueued jobs', async () => {
    const rows = Array.from({ length: 1_000_000 }, (_, i) => [i + 1, 1_000 * i] as const);
    const store = lister(rows);
    expect(await cursorEnqueuedBefore(store, new Date(1_000 * 654_321 + 1))).toBe('654323');
    expect(store.probes).toBeLessThan(10);
  });
});
