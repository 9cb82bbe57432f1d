// The job list's paging over filters no index serves: following its cursors from the top
// visits every match once, newest first, however sparse the matches and the ids.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/core/types.js';
import { jobsPage } from '../../src/dashboard/job-search.js';
import type { JobListParams } from '../../src/store/store.js';

function fakeMailroom(rows: ReadonlyArray<{ readonly id: number; readonly type: string }>) {
  return {
    async listJobs(params: JobListParams): Promise<Job[]> {
      const after = params.after === undefined ? Infinity : Number(params.after);
      const until = params.until === undefined ? -Infinity : Number(params.until);
      return [...rows]
        .reverse()
        .filter((row) => row.id < after && row.id > until && (params.type === undefined || row.type === params.type))
        .slice(0, params.limit ?? 100)
        .map((row) => ({ id: String(row.id), type: row.type }) as Job);
    },
  };
}

describe('jobsPage', () => {
  it('visits every match once, newest first, by following its cursors', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 30_000 }), fc.boolean()), { maxLength: 40 }),
        fc.integer({ min: 1, max: 5 }),
        async (steps, pageSize) => {
          let id = 0;
          const rows = steps.map(([gap, match]) => ({ id: (id += gap), type: match ? 'wanted' : 'other' }));
          const mr = fakeMailroom(rows);
          const seen: string[] = [];
          let after: string | undefined;
          for (let pages = 0; pages < 1_000; pages++) {
            const page = await jobsPage(mr, { type: 'wanted' }, after, pageSize);
            expect(page.jobs.length).toBeLessThanOrEqual(pageSize);
            seen.push(...page.jobs.map((job) => job.id));
            if (page.nextAfter === null) break;
            after = page.nextAfter;
          }
          const expected = rows.filter((row) => row.type === 'wanted').map((row) => String(row.id)).reverse();
          expect(seen).toEqual(expected);
        },
      ),
      { numRuns: 60 },
    );
  });
});
