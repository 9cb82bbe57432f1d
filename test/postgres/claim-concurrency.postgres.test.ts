// PostgreSQL-only: SQLite has one writer, so its claims can never race. Here many
// connections claim at once through FOR UPDATE SKIP LOCKED, and this checks what the
// shared suite cannot: a batch never exceeds its limit under contention, no job is leased
// twice, group heads hold across connections, and the sharded counters stay exact while
// claimers and completers on several queues run concurrently (no deadlock escapes).
import { describe, it, expect, afterEach } from 'vitest';
import type { ClaimedJob } from '../../src/core/types.js';
import type { Store } from '../../src/store/store.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { waitFor } from '../harness/wait.js';
import { jobInsert } from '../harness/factory.js';
import { connectClient, postgresHarness } from '../harness/postgres.js';
import { asDone, asFailed } from '../harness/finishes.js';

/** Three stores (pools of 10): real cross-connection contention, modest use of a shared server. */
const STORES = 3;

async function openStores(): Promise<Store[]> {
  const opened = await postgresHarness.open();
  const stores: Store[] = [opened.store];
  for (let i = 1; i < STORES; i += 1) stores.push(await opened.openAnother());
  return stores;
}

describe.skipIf(!postgresHarness.isAvailable)('postgres concurrent claims', () => {
  afterEach(() => postgresHarness.cleanup());

  it('gives 100 concurrent claimers at most 10 jobs each and never the same job twice', async () => {
    const stores = await openStores();
    const JOBS = 600;
    await stores[0]!.jobInsertMany({ jobs: Array.from({ length: JOBS }, (_, n) => jobInsert({ type: 'race', payload: { n } })) });
    const batches: ClaimedJob[][] = [];
    // Each claimer keeps claiming until it comes back empty: every row a claimer locks it
    // also leases, so when all are empty every job has been leased exactly once.
    await Promise.all(
      Array.from({ length: 100 }, async (_, n) => {
        const store = stores[n % STORES]!;
        for (;;) {
          const batch = await store.jobClaim({ workerId: `w${n}`, types: ['race'], queues: null, limit: 10, leaseMs: 60_000 });
          if (batch.length === 0) return;
          batches.push(batch);
        }
      }),
    );
    expect(Math.max(...batches.map((batch) => batch.length))).toBeLessThanOrEqual(10);
    const ids = batches.flat().map((job) => job.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(JOBS);
    expect((await stores[0]!.jobStats({})).byQueue.default).toEqual({ pending: 0, running: JOBS, done: 0, dead: 0 });
  });

  it('never leases the same job twice to 100 claimers in several named queues, each queue read apart', async () => {
    // jobClaim.inQueues reads candidates unlocked and locks them after: a row another claim
    // leased meanwhile must be left out, not leased again.
    const stores = await openStores();
    const JOBS = 600;
    await stores[0]!.jobInsertMany({
      jobs: Array.from({ length: JOBS }, (_, n) => jobInsert({ type: 'race', queue: n % 2 === 0 ? 'q1' : 'q2', payload: { n } })),
    });
    const batches: ClaimedJob[][] = [];
    await Promise.all(
      Array.from({ length: 100 }, async (_, n) => {
        const store = stores[n % STORES]!;
        const queues = n % 3 === 0 ? ['q2', 'q1'] : ['q1', 'q2'];
        for (;;) {
          const batch = await store.jobClaim({ workerId: `w${n}`, types: ['race'], queues, limit: 10, leaseMs: 60_000 });
          // A claim whose candidates other claims locked first comes back short: ask before stopping.
          if (batch.length === 0 && !(await store.jobClaimable({ types: ['race'], queues })).hasClaimable) return;
          batches.push(batch);
        }
      }),
    );
    expect(Math.max(...batches.map((batch) => batch.length))).toBeLessThanOrEqual(10);
    const ids = batches.flat().map((job) => job.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(JOBS);
    const { byQueue } = await stores[0]!.jobStats({});
    expect([byQueue.q1, byQueue.q2]).toEqual([
      { pending: 0, running: JOBS / 2, done: 0, dead: 0 },
      { pending: 0, running: JOBS / 2, done: 0, dead: 0 },
    ]);
  });

  it('leases only group heads while many connections claim at once', async () => {
    const stores = await openStores();
    const GROUPS = 20;
    await stores[0]!.jobInsertMany({
      jobs: Array.from({ length: GROUPS * 5 }, (_, n) => jobInsert({ type: 'grouped', group: `g${n % GROUPS}`, payload: { n } })),
    });
    const claimed = (
      await Promise.all(
        Array.from({ length: 40 }, (_, n) =>
          stores[n % STORES]!.jobClaim({ workerId: `w${n}`, types: ['grouped'], queues: null, limit: 3, leaseMs: 60_000 }),
        ),
      )
    ).flat();
    const groups = claimed.map((job) => job.group);
    expect(new Set(groups).size).toBe(groups.length);
    expect(claimed.length).toBe(GROUPS);
  });

  it('keeps the sharded status counters exact while claimers and completers race on several queues', async () => {
    const stores = await openStores();
    const QUEUES = ['a', 'b', 'c', 'd'];
    const PER_QUEUE = 150;
    await stores[0]!.jobInsertMany({
      jobs: QUEUES.flatMap((queue) => Array.from({ length: PER_QUEUE }, (_, n) => jobInsert({ type: 'count', queue, payload: { n } }))),
    });
    let completed = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: 24 }, async (_, n) => {
        const store = stores[n % STORES]!;
        for (;;) {
          // Claim across all queues (counter rows of several queues in one statement), then
          // finish half by completing and half by a retry-less failure.
          const batch = await store.jobClaim({ workerId: `w${n}`, types: ['count'], queues: null, limit: 7, leaseMs: 60_000 });
          if (batch.length === 0) return;
          const half = Math.ceil(batch.length / 2);
          const done = await store.jobFinishMany({ finishes: asDone(batch.slice(0, half)) });
          const dead = await store.jobFinishMany({
            finishes: asFailed(batch.slice(half).map((job) => ({ id: job.id, leaseToken: job.leaseToken, error: 'x', outcome: 'failed' as const, retryDelayMs: null }))),
          });
          // Added after both awaits: `x += await …` would read x before the await and lose updates.
          completed += done.length;
          failed += dead.length;
        }
      }),
    );
    expect(completed + failed).toBe(QUEUES.length * PER_QUEUE);
    const stats = await stores[1]!.jobStats({});
    const total = { pending: 0, running: 0, done: 0, dead: 0 };
    for (const queue of QUEUES) {
      const counts = stats.byQueue[queue]!;
      expect(counts.pending + counts.running).toBe(0);
      expect(counts.done + counts.dead).toBe(PER_QUEUE);
      total.done += counts.done;
      total.dead += counts.dead;
    }
    expect(total).toEqual({ pending: 0, running: 0, done: completed, dead: failed });
  });

  it('counts a due limited job another claim has locked as claimable, so drained() does not return beside it', async () => {
    // A check that locked rows with SKIP LOCKED, as the claim does, answered "nothing" while
    // another check (a worker's claim loop asking when to wake) held the job for a moment:
    // drained() returned with a job due, and a claim beside that check skipped it.
    const opened = await postgresHarness.open();
    const store = opened.store;
    await store.jobInsertMany({ jobs: [jobInsert({ type: 'limited', limitKey: 'k' })] });
    const limits = [{ type: 'limited', perKey: { concurrency: 1 } }];
    const holder = await connectClient();
    try {
      await holder.query(`SET search_path TO "${new URL(opened.url).searchParams.get('schema')}"`);
      await holder.query('BEGIN');
      expect((await holder.query(`SELECT id FROM mailroom_job WHERE type = 'limited' FOR UPDATE`)).rowCount).toBe(1);
      expect(await store.jobClaimable({ types: ['limited'], queues: null, limits })).toMatchObject({ hasClaimable: true });
      await holder.query('ROLLBACK');
      // A claim after a check still takes it: the check held nothing.
      expect(await store.jobClaimable({ types: ['limited'], queues: null, limits })).toMatchObject({ hasClaimable: true });
      const claimed = await store.jobClaim({ workerId: 'w', types: ['limited'], queues: null, limits, limit: 1, leaseMs: 60_000 });
      expect(claimed.map((job) => job.type)).toEqual(['limited']);
      expect(await store.jobClaimable({ types: ['limited'], queues: null, limits })).toMatchObject({ hasClaimable: false });
    } finally {
      await holder.end();
    }
  });

  it('holds per-key limits across 30 concurrent claimers, for types whose names need quoting in the lock statement', async () => {
    // limitLock goes in BEGIN's simple query with the types written in as literals: a quote,
    // a backslash or a `$&` in a name must neither break it nor lock another name.
    const stores = await openStores();
    const types = ["it's", 'back\\slash $& $1', 'plain'];
    const limits = types.map((type) => ({ type, perKey: { concurrency: 1 } }));
    await stores[0]!.jobInsertMany({ jobs: types.flatMap((type) => Array.from({ length: 20 }, (_, n) => jobInsert({ type, limitKey: `k${n % 2}`, payload: { key: `k${n % 2}` } }))) });
    const claimed = (
      await Promise.all(
        Array.from({ length: 30 }, (_, n) =>
          stores[n % STORES]!.jobClaim({ workerId: `w${n}`, types: n % 2 === 0 ? types : [types[n % 3]!], queues: null, limits, limit: 5, leaseMs: 60_000 }),
        ),
      )
    ).flat();
    const perKey = new Map<string, number>();
    for (const job of claimed) {
      const pair = `${job.type}/${(job.payload as { key: string }).key}`;
      perKey.set(pair, (perKey.get(pair) ?? 0) + 1);
    }
    expect(Object.fromEntries(perKey)).toEqual(Object.fromEntries(types.flatMap((type) => [`${type}/k0`, `${type}/k1`].map((key) => [key, 1]))));
  });

  it('holds type and per-key concurrency across 30 concurrent claimers while claims with room take the one-statement path', async () => {
    // A claim of one type whose usage leaves room for all of it picks and leases with the
    // plain claim statement; as the keys fill, claims go back to pick and admit. Neither may
    // let a key or the type past its limit while other connections claim.
    const stores = await openStores();
    const limits = [
      { type: 'keyed', perKey: { concurrency: 10 } },
      { type: 'capped', concurrency: 7 },
    ];
    await stores[0]!.jobInsertMany({
      jobs: [
        ...Array.from({ length: 60 }, (_, n) => jobInsert({ type: 'keyed', limitKey: `k${n % 2}`, payload: { key: `k${n % 2}` } })),
        ...Array.from({ length: 30 }, () => jobInsert({ type: 'capped' })),
      ],
    });
    const claimed = (
      await Promise.all(
        Array.from({ length: 30 }, (_, n) =>
          stores[n % STORES]!.jobClaim({ workerId: `w${n}`, types: [n % 2 === 0 ? 'keyed' : 'capped'], queues: null, limits, limit: 3, leaseMs: 60_000 }),
        ),
      )
    ).flat();
    const count = (pick: (job: (typeof claimed)[number]) => boolean) => claimed.filter(pick).length;
    expect(count((job) => job.type === 'capped')).toBe(7);
    expect(count((job) => (job.payload as { key?: string }).key === 'k0')).toBe(10);
    expect(count((job) => (job.payload as { key?: string }).key === 'k1')).toBe(10);
  });

  it('holds a per-key limit when the database’s default isolation is REPEATABLE READ', async () => {
    // The claim reads the usage in a statement after its advisory lock: only a fresh snapshot
    // per statement (READ COMMITTED, which the worker's pool sets itself) sees a claim that
    // committed while it waited. Here another session holds the lock and leases the key's
    // job in queue a; the claim in queue b waits, then must find the key full.
    const opened = await postgresHarness.open();
    const schema = new URL(opened.url).searchParams.get('schema')!;
    const url = new URL(opened.url);
    url.searchParams.set('options', '-c default_transaction_isolation=repeatable\\ read');
    const store = await PostgresStore.open({ url: url.toString() });
    const holder = await connectClient();
    try {
      const limits = [{ type: 'keyed', perKey: { concurrency: 1 } }];
      const [a] = await store.jobInsertMany({ jobs: [jobInsert({ type: 'keyed', limitKey: 'k', queue: 'a' }), jobInsert({ type: 'keyed', limitKey: 'k', queue: 'b' })] });
      await holder.query(`SET search_path TO "${schema}"`);
      await holder.query('BEGIN');
      await holder.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`${schema}:keyed`]);
      await holder.query(
        `UPDATE mailroom_job SET status = 'running', attempts = attempts + 1, lease_owner = 'holder', lease_token = 'holder',
           lease_expires_at = now() + interval '1 minute', started_at = now() WHERE id = $1`,
        [a!.job.id],
      );
      const claim = store.jobClaim({ workerId: 'w', types: ['keyed'], queues: ['b'], limits, limit: 1, leaseMs: 60_000 });
      await waitFor(async () => (await holder.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).rowCount! > 0, { description: 'the claim waiting for the lock' });
      await holder.query('COMMIT');
      expect(await claim).toEqual([]);
    } finally {
      await holder.end();
      await store.close();
    }
  });
});
