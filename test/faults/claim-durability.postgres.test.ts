// PostgreSQL only: a claim and a lease extension that a worker was told of survive a
// server crash. A worker runs a job as soon as its claim returns; had the claim committed
// without waiting for the WAL flush (synchronous_commit = off, as outcomes do) a crash could
// lose it, the job would be pending again, and a second claim would run it while the first
// worker still did: two runs at once (the soak saw 7 such overlaps in 5 minutes of
// server crashes). A lost extension would likewise let the rescue hand on a job whose
// worker was told it still held it. The crash is `pg_ctl stop -m immediate` on a
// throwaway cluster, right after the acknowledgement: nothing had time to flush it. Each
// round's write under test is the last before its crash: a later durable commit would
// flush an earlier lost one and hide it.

import { afterEach, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { TypeLimits } from '../../src/store/limits.js';
import { jobInsert } from '../harness/factory.js';
import { findPostgresBinOrWarn, startThrowawayCluster } from './pg-cluster.js';
import type { ThrowawayCluster } from './pg-cluster.js';

const IS_CI = process.env.CI === 'true';
const bin = findPostgresBinOrWarn('the PostgreSQL claim durability test');
const LEASE_MS = 60_000;
const EXTENDED_MS = 600_000;
/** Each kind of write a worker acts on at once, twice. */
const ROUNDS = ['claim', 'claim in queues', 'limited claim', 'extension', 'claim', 'claim in queues', 'limited claim', 'extension'] as const;

describe('claims across a PostgreSQL server crash', () => {
  let cluster: ThrowawayCluster | null = null;
  const stores: PostgresStore[] = [];

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close().catch(() => undefined);
    cluster?.destroy();
    cluster = null;
  });

  it.skipIf(!bin && !IS_CI)('keeps every claim and lease extension the worker was told of', async () => {
    if (!bin) throw new Error('initdb/pg_ctl not found: install the PostgreSQL server package');
    cluster = await startThrowawayCluster(bin);
    const open = async () => {
      const store = await PostgresStore.open({ url: cluster!.url, schema: 'mr_claims' });
      stores.push(store);
      await store.migrate();
      return store;
    };
    const told: Array<{ round: string; id: string; extendedAt: number }> = [];
    for (const [n, round] of ROUNDS.entries()) {
      const store = await open();
      const type = `t${n}`;
      const limits: TypeLimits[] = [{ type, perKey: { concurrency: 1 } }];
      await store.jobInsertMany({ jobs: [jobInsert({ type, queue: 'q', limitKey: 'k' })] });
      const claim = () =>
        store.jobClaim({
          workerId: 'w',
          types: [type],
          queues: round === 'claim in queues' ? ['q'] : null,
          limit: 1,
          leaseMs: LEASE_MS,
          ...(round === 'limited claim' ? { limits } : {}),
        });
      const [job] = await claim();
      expect(job?.type).toBe(type);
      let extendedAt = 0;
      if (round === 'extension') {
        // The claim was flushed by now (it waits for it); the extension is the last write.
        extendedAt = Date.now();
        expect(await store.jobExtendLease({ leases: [{ id: job!.id, leaseToken: job!.leaseToken }], leaseMs: EXTENDED_MS })).toEqual([job!.id]);
      }
      told.push({ round, id: job!.id, extendedAt });
      cluster.crash();
      await store.close().catch(() => undefined);
      cluster.start();
    }
    const store = await open();
    const found = [];
    for (const { round, id, extendedAt } of told) {
      const job = await store.jobGet({ id });
      const expiresAt = job?.leaseExpiresAt?.getTime() ?? 0;
      const lease = extendedAt === 0 ? 'claimed' : expiresAt > extendedAt + EXTENDED_MS - 5_000 ? 'extended' : 'lost';
      found.push({ round, status: job?.status, attempts: job?.attempts, lease });
    }
    expect(found).toEqual(told.map(({ round, extendedAt }) => ({ round, status: 'running', attempts: 1, lease: extendedAt > 0 ? 'extended' : 'claimed' })));
  }, 120_000);
});
