// Trace context: what an enqueuer's OpenTelemetry propagator injected is stored with the
// job as given and handed back at claim (another process may run the job), on every
// insert path: keyed, keyless, fanned out from an event, and shared group inserts.

import { describe, expect, it } from 'vitest';
import type { StoreHarness } from '../harness/store-harness.js';
import { T0, claim, idsOf, jobInsert, useStore } from './context.js';

const CARRIER_A = JSON.stringify({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
const CARRIER_B = JSON.stringify({
  traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00',
  tracestate: 'vendor=opaque,other=ü',
});

export function traceContextConformance(harness: StoreHarness): void {
  describe('trace context', () => {
    const ctx = useStore(harness);

    it('stores each keyless job its own trace context, or none, and hands it back at claim', async () => {
      const results = await ctx.store.jobInsertMany({
        jobs: [jobInsert({ traceContext: CARRIER_A }), jobInsert(), jobInsert({ traceContext: CARRIER_B })],
        now: T0,
      });
      expect(results.map((r) => r.job.traceContext)).toEqual([CARRIER_A, null, CARRIER_B]);
      const claimed = await claim(ctx.store);
      expect(idsOf(claimed)).toEqual(idsOf(results.map((r) => r.job)));
      expect(claimed.map((job) => job.traceContext)).toEqual([CARRIER_A, null, CARRIER_B]);
      expect((await ctx.store.jobGet({ id: results[2]!.job.id }))!.traceContext).toBe(CARRIER_B);
    });

    it('stores the trace context of a keyed job, and a duplicate enqueue keeps the first one', async () => {
      const [first] = await ctx.store.jobInsertMany({ jobs: [jobInsert({ key: 'k1', traceContext: CARRIER_A })], now: T0 });
      const [again] = await ctx.store.jobInsertMany({ jobs: [jobInsert({ key: 'k1', traceContext: CARRIER_B })], now: T0 });
      expect(first!.job.traceContext).toBe(CARRIER_A);
      expect(again!.isDuplicate).toBe(true);
      expect(again!.job.traceContext).toBe(CARRIER_A);
      const [claimed] = await claim(ctx.store);
      expect(claimed!.traceContext).toBe(CARRIER_A);
    });

    it('stores no trace context for a job inserted without one', async () => {
      const [keyed, keyless] = await ctx.store.jobInsertMany({ jobs: [jobInsert({ key: 'k2' }), jobInsert()], now: T0 });
      expect([keyed!.job.traceContext, keyless!.job.traceContext]).toEqual([null, null]);
      const claimed = await claim(ctx.store, { queues: ['default'] });
      expect(claimed.map((job) => job.traceContext)).toEqual([null, null]);
    });

    it('keeps the trace context of jobs fanned out from an event through claim', async () => {
      const result = await ctx.store.eventInsertWithJobs({
        event: { source: 'github', deliveryId: 'd-trace', type: 'push', headers: {}, rawBody: Buffer.from('{}') },
        jobs: [jobInsert({ traceContext: CARRIER_A }), jobInsert({ traceContext: CARRIER_A })],
        now: T0,
      });
      expect(result.jobs.map((job) => job.traceContext)).toEqual([CARRIER_A, CARRIER_A]);
      const claimed = await claim(ctx.store);
      expect(claimed.map((job) => job.traceContext)).toEqual([CARRIER_A, CARRIER_A]);
    });

    it('keeps each caller its own trace context when concurrent enqueues share one insert', async () => {
      // On the store's clock (no `now`), so concurrent callers go through the shared insert.
      const carriers = [CARRIER_A, null, CARRIER_B, CARRIER_A, null];
      const results = await Promise.all(
        carriers.map((carrier) => ctx.store.jobInsertMany({ jobs: [jobInsert(carrier ? { traceContext: carrier } : {})] })),
      );
      expect(results.map(([r]) => r!.job.traceContext)).toEqual(carriers);
      const claimed = await claim(ctx.store, { now: undefined });
      const byId = new Map(claimed.map((job) => [job.id, job.traceContext]));
      expect(results.map(([r]) => byId.get(r!.job.id))).toEqual(carriers);
    });
  });
}
