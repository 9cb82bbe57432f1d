// PostgreSQL-only smoke tests of the store's basic paths, written before the shared
// conformance suite (test/conformance) existed; the conformance suite covers behaviour,
// these only prove the PostgreSQL plumbing (schemas, casts, arrays, triggers) end to end.
import { describe, it, expect, afterEach } from 'vitest';
import { postgresHarness } from '../harness/postgres.js';
import { insertJob, jobInsert } from '../harness/factory.js';

describe.skipIf(!postgresHarness.isAvailable)('postgres store smoke', () => {
  afterEach(() => postgresHarness.cleanup());

  it('walks a job through insert, claim, fail, claim, complete with counters and history', async () => {
    const { store } = await postgresHarness.open();
    const [first, second] = await store.jobInsertMany({ jobs: [jobInsert({ type: 'a', payload: { x: 1 } }), jobInsert({ type: 'a', key: 'k1', payload: { y: [1, 2] } })] });
    expect(BigInt(second!.job.id)).toBeGreaterThan(BigInt(first!.job.id));
    const dup = await store.jobInsertMany({ jobs: [jobInsert({ type: 'a', key: 'k1', payload: { y: [1, 2] } })] });
    expect(dup[0]!.isDuplicate).toBe(true);
    await expect(store.jobInsertMany({ jobs: [jobInsert({ type: 'a' }), jobInsert({ type: 'a', key: 'k1', payload: { y: 3 } })] })).rejects.toMatchObject({ code: 'MR_ERR_KEY_CONFLICT' });
    const claimed = await store.jobClaim({ workerId: 'w', types: ['a'], queues: null, limit: 1, leaseMs: 1000 });
    expect(claimed.map((j) => j.id)).toEqual([first!.job.id]);
    expect(await store.jobFail({ failures: [{ id: claimed[0]!.id, leaseToken: claimed[0]!.leaseToken, error: 'boom', outcome: 'failed', retryDelayMs: 0 }] })).toEqual([first!.job.id]);
    const again = await store.jobClaim({ workerId: 'w', types: ['a'], queues: ['default'], limit: 5, leaseMs: 1000 });
    // The retried job's run_at moved to its failure time, so the untouched one comes first.
    expect(again.map((j) => j.id)).toEqual([second!.job.id, first!.job.id]);
    expect(await store.jobComplete({ leases: again })).toEqual(again.map((j) => j.id));
    const detail = await store.jobGet({ id: first!.job.id });
    expect(detail!.attemptsLog.map((a) => a.outcome)).toEqual(['failed', 'done']);
    const stats = await store.jobStats({});
    expect(stats.byQueue.default).toEqual({ pending: 0, running: 0, done: 2, dead: 0 });
    const dead = await insertJob(store, { status: 'dead', maxAttempts: 2 });
    expect(await store.jobReplay({ filter: { status: 'dead' }, reason: 'r', by: 'me' })).toEqual([dead.id]);
    expect(await store.jobReplay({ ids: [first!.job.id], reason: 'again', by: null, force: true })).toEqual([first!.job.id]);
    const replayed = await store.jobGet({ id: first!.job.id });
    expect(replayed!.attemptsLog.map((a) => a.outcome)).toEqual(['failed', 'done']);
    expect(replayed!.replays).toHaveLength(1);
    const ev = await store.eventInsertWithJobs({ event: { source: 's', deliveryId: 'd1', type: 't', headers: { a: 'b' }, rawBody: Buffer.from([0, 255, 10]) }, jobs: [jobInsert({ type: 'e' })] });
    const ev2 = await store.eventInsertWithJobs({ event: { source: 's', deliveryId: 'd1', type: 't', headers: {}, rawBody: Buffer.from('x') }, jobs: [jobInsert({ type: 'e' })] });
    expect(ev2.isDuplicate).toBe(true);
    expect(ev2.jobs.map((j) => j.id)).toEqual(ev.jobs.map((j) => j.id));
    expect((await store.eventGet({ id: ev.event.id }))!.rawBody).toEqual(Buffer.from([0, 255, 10]));
    expect(await store.jobList({ status: 'pending', errorContains: 'BOO' })).toHaveLength(0);
    expect(await store.jobGet({ id: '99999999999999999999' })).toBeNull();
    const purge = await store.jobPurge({ doneOlderThanMs: -1000 });
    expect(purge.jobs).toBe(1);
    expect(await store.schemaVersion()).toEqual({ database: 1, code: 1 });
  });
});
