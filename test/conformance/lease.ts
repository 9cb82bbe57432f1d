// Leases: extension by the holder only, rescue of expired leases (pending, or dead on the
// last attempt, logged `lost`), and fencing: a worker whose lease was taken over can no
// longer complete, fail, extend or hand back its job. The rescue racing a completion is
// tested in both orders, and (where a transaction can be held open) concurrently.

import { describe, expect, it } from 'vitest';
import type { ClaimedJob } from '../../src/core/types.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { SECOND_MS, T0, at, claim, claimOne, enqueue, useStore } from './context.js';
import { asDone, asFailed, asHandedBack } from '../harness/finishes.js';

const LEASE_MS = 30 * SECOND_MS;

export function leaseConformance(harness: StoreHarness): void {
  describe('lease', () => {
    const ctx = useStore(harness);

    /** Claims at T0 as worker-old, expires and rescues the lease, re-claims as worker-new. */
    async function takenOver(): Promise<{ stale: ClaimedJob; fresh: ClaimedJob }> {
      await enqueue(ctx.store);
      const stale = await claimOne(ctx.store, { workerId: 'worker-old', leaseMs: LEASE_MS, now: T0 });
      const rescued = await ctx.store.jobRescue({ now: at(LEASE_MS + SECOND_MS) });
      expect(rescued.requeued).toEqual([stale.id]);
      const fresh = await claimOne(ctx.store, { workerId: 'worker-new', leaseMs: LEASE_MS, now: at(LEASE_MS + 2 * SECOND_MS) });
      expect(fresh.id).toBe(stale.id);
      return { stale, fresh };
    }

    it('extends a lease for the holder of its token, from the given now', async () => {
      await enqueue(ctx.store);
      const job = await claimOne(ctx.store, { leaseMs: LEASE_MS });
      const extended = await ctx.store.jobExtendLease({ leases: [job], leaseMs: 2 * LEASE_MS, now: at(20 * SECOND_MS) });
      expect(extended).toEqual([job.id]);
      expect((await ctx.store.jobGet({ id: job.id }))!.leaseExpiresAt).toEqual(at(20 * SECOND_MS + 2 * LEASE_MS));
    });

    it('refuses to extend a lease with a wrong token and leaves its expiry alone', async () => {
      await enqueue(ctx.store);
      const job = await claimOne(ctx.store, { leaseMs: LEASE_MS });
      const extended = await ctx.store.jobExtendLease({
        leases: [{ id: job.id, leaseToken: `${job.leaseToken}-forged` }],
        leaseMs: 10 * LEASE_MS,
        now: at(SECOND_MS),
      });
      expect(extended).toEqual([]);
      expect((await ctx.store.jobGet({ id: job.id }))!.leaseExpiresAt).toEqual(at(LEASE_MS));
    });

    it('refuses to extend the lease of a job that already finished', async () => {
      await enqueue(ctx.store);
      const job = await claimOne(ctx.store);
      await ctx.store.jobFinishMany({ finishes: asDone([job]), now: T0 });
      expect(await ctx.store.jobExtendLease({ leases: [job], leaseMs: LEASE_MS, now: T0 })).toEqual([]);
    });

    it('does not rescue a lease before it expires', async () => {
      await enqueue(ctx.store);
      const job = await claimOne(ctx.store, { leaseMs: LEASE_MS });
      expect(await ctx.store.jobRescue({ now: at(LEASE_MS - 1) })).toEqual({ requeued: [], dead: [] });
      expect((await ctx.store.jobGet({ id: job.id }))!.status).toBe('running');
    });

    it('rescues an expired lease to pending with the attempt still charged and logged lost', async () => {
      await enqueue(ctx.store, { maxAttempts: 3 });
      const job = await claimOne(ctx.store, { workerId: 'worker-crashed', leaseMs: LEASE_MS });
      const rescued = await ctx.store.jobRescue({ now: at(LEASE_MS + SECOND_MS) });
      expect(rescued).toEqual({ requeued: [job.id], dead: [] });
      const after = (await ctx.store.jobGet({ id: job.id }))!;
      expect(after).toMatchObject({ status: 'pending', attempts: 1, leaseExpiresAt: null });
      expect(after.runAt.getTime()).toBeLessThanOrEqual(at(LEASE_MS + SECOND_MS).getTime());
      expect(after.attemptsLog).toHaveLength(1);
      expect(after.attemptsLog[0]).toMatchObject({ attempt: 1, outcome: 'lost', workerId: 'worker-crashed' });
      expect(after.attemptsLog[0]!.startedAt).toEqual(T0);
      // Due again at once: the next worker picks it up.
      expect((await claim(ctx.store, { now: at(LEASE_MS + SECOND_MS) }))[0]!.attempts).toBe(2);
    });

    it('rescues an expired lease on the last attempt to dead as exhausted', async () => {
      await enqueue(ctx.store, { maxAttempts: 1 });
      const job = await claimOne(ctx.store, { workerId: 'worker-crashed', leaseMs: LEASE_MS });
      const rescued = await ctx.store.jobRescue({ now: at(LEASE_MS + SECOND_MS) });
      expect(rescued).toEqual({ requeued: [], dead: [job.id] });
      const after = (await ctx.store.jobGet({ id: job.id }))!;
      expect(after).toMatchObject({ status: 'dead', deadReason: 'exhausted', attempts: 1 });
      expect(after.lastError).toEqual(expect.any(String));
      expect(after.finishedAt).toEqual(at(LEASE_MS + SECOND_MS));
      expect(after.attemptsLog.map((a) => a.outcome)).toEqual(['lost']);
    });

    it('rescues at most limit leases per call', async () => {
      await enqueue(ctx.store);
      await enqueue(ctx.store);
      await enqueue(ctx.store);
      await claim(ctx.store, { leaseMs: LEASE_MS });
      const first = await ctx.store.jobRescue({ now: at(LEASE_MS + SECOND_MS), limit: 2 });
      expect(first.requeued).toHaveLength(2);
      const second = await ctx.store.jobRescue({ now: at(LEASE_MS + SECOND_MS), limit: 2 });
      expect(second.requeued).toHaveLength(1);
    });

    it('gives a claim after expiry and rescue a new lease token and owner', async () => {
      const { stale, fresh } = await takenOver();
      expect(fresh.leaseToken).not.toBe(stale.leaseToken);
      expect(fresh.leaseOwner).toBe('worker-new');
      expect(fresh.attempts).toBe(2);
    });

    it('fences a late completion with the stale token after the lease was taken over', async () => {
      const { stale, fresh } = await takenOver();
      expect(await ctx.store.jobFinishMany({ finishes: asDone([stale]), now: at(LEASE_MS + 3 * SECOND_MS) })).toEqual([]);
      const after = (await ctx.store.jobGet({ id: stale.id }))!;
      expect(after).toMatchObject({ status: 'running', leaseOwner: 'worker-new', attempts: 2 });
      expect(await ctx.store.jobFinishMany({ finishes: asDone([fresh]), now: at(LEASE_MS + 4 * SECOND_MS) })).toEqual([fresh.id]);
      expect((await ctx.store.jobGet({ id: stale.id }))!.status).toBe('done');
    });

    it('fences a late failure with the stale token: no outcome and no attempt row', async () => {
      const { stale } = await takenOver();
      const failed = await ctx.store.jobFinishMany({
        finishes: asFailed([{ id: stale.id, leaseToken: stale.leaseToken, error: 'Error: late', outcome: 'failed', retryDelayMs: null, deadReason: 'permanent' }]),
        now: at(LEASE_MS + 3 * SECOND_MS),
      });
      expect(failed).toEqual([]);
      const after = (await ctx.store.jobGet({ id: stale.id }))!;
      expect(after).toMatchObject({ status: 'running', deadReason: null, leaseOwner: 'worker-new' });
      expect(after.attemptsLog.map((a) => a.outcome)).toEqual(['lost']);
      expect(after.lastError ?? '').not.toContain('late');
    });

    it('fences a late lease extension with the stale token', async () => {
      const { stale, fresh } = await takenOver();
      const extended = await ctx.store.jobExtendLease({ leases: [stale], leaseMs: 10 * LEASE_MS, now: at(LEASE_MS + 3 * SECOND_MS) });
      expect(extended).toEqual([]);
      expect((await ctx.store.jobGet({ id: stale.id }))!.leaseExpiresAt).toEqual(fresh.leaseExpiresAt);
    });

    it('fences a late hand-back with the stale token: attempts stay charged', async () => {
      const { stale } = await takenOver();
      expect(await ctx.store.jobFinishMany({ finishes: asHandedBack([stale]), now: at(LEASE_MS + 3 * SECOND_MS) })).toEqual([]);
      const after = (await ctx.store.jobGet({ id: stale.id }))!;
      expect(after).toMatchObject({ status: 'running', attempts: 2, leaseOwner: 'worker-new' });
      expect(after.attemptsLog.map((a) => a.outcome)).toEqual(['lost']);
    });

    it('fences an outcome written after a rescue even before anyone re-claims the job', async () => {
      await enqueue(ctx.store);
      const job = await claimOne(ctx.store, { leaseMs: LEASE_MS });
      await ctx.store.jobRescue({ now: at(LEASE_MS + SECOND_MS) });
      expect(await ctx.store.jobFinishMany({ finishes: asDone([job]), now: at(LEASE_MS + 2 * SECOND_MS) })).toEqual([]);
      expect((await ctx.store.jobGet({ id: job.id }))!.status).toBe('pending');
    });

    it('keeps a completion that committed before the rescue ran: the rescue changes nothing', async () => {
      await enqueue(ctx.store);
      const job = await claimOne(ctx.store, { leaseMs: LEASE_MS });
      expect(await ctx.store.jobFinishMany({ finishes: asDone([job]), now: at(LEASE_MS - SECOND_MS) })).toEqual([job.id]);
      expect(await ctx.store.jobRescue({ now: at(LEASE_MS + SECOND_MS) })).toEqual({ requeued: [], dead: [] });
      const after = (await ctx.store.jobGet({ id: job.id }))!;
      expect(after.status).toBe('done');
      expect(after.attemptsLog.map((a) => a.outcome)).toEqual(['done']);
    });

    it.skipIf(!harness.capabilities.asyncTransactions)(
      'passes over a lease whose completion is still open in another transaction, which then commits done (asyncTransactions)',
      async () => {
        await enqueue(ctx.store);
        const job = await claimOne(ctx.store, { leaseMs: LEASE_MS });
        let commit!: () => void;
        const heldOpen = new Promise<void>((resolve) => (commit = resolve));
        let completed!: () => void;
        const completedInTx = new Promise<void>((resolve) => (completed = resolve));
        const transaction = ctx.store.transaction!(async (tx) => {
          expect(await tx.jobFinishMany({ finishes: asDone([job]), now: at(LEASE_MS - SECOND_MS) })).toEqual([job.id]);
          completed();
          await heldOpen;
        });
        await completedInTx;
        // The lease looks expired to the rescue's clock, but its row is being completed: the
        // rescue neither waits for that transaction nor overrides it.
        expect(await ctx.store.jobRescue({ now: at(LEASE_MS + SECOND_MS) })).toEqual({ requeued: [], dead: [] });
        commit();
        await transaction;
        expect(await ctx.store.jobRescue({ now: at(LEASE_MS + 2 * SECOND_MS) })).toEqual({ requeued: [], dead: [] });
        const after = (await ctx.store.jobGet({ id: job.id }))!;
        expect(after.status).toBe('done');
        expect(after.attemptsLog.map((a) => a.outcome)).toEqual(['done']);
      },
    );

    it('completes only the leases it still holds in a batch', async () => {
      await enqueue(ctx.store);
      await enqueue(ctx.store);
      const [a, b] = await claim(ctx.store);
      const completed = await ctx.store.jobFinishMany({
        finishes: asDone([a!, { id: b!.id, leaseToken: 'not-the-token' }]),
        now: T0,
      });
      expect(completed).toEqual([a!.id]);
      expect((await ctx.store.jobGet({ id: b!.id }))!.status).toBe('running');
    });
  });
}
