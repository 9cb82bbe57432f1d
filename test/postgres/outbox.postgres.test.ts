// PostgreSQL-only: the outbox runs on the caller's own node-postgres client inside the
// caller's transaction (SQLite's outbox is the synchronous transactionSync on the shared
// handle, tested in the shared suite). What only a multi-connection server can show: an
// uncommitted job is invisible to other connections, and a rollback leaves no job.
import { describe, it, expect, afterEach } from 'vitest';
import type pg from 'pg';
import { jobInsert } from '../harness/factory.js';
import { connectClient, postgresHarness } from '../harness/postgres.js';
import { waitFor } from '../harness/wait.js';

const claimAll = { workerId: 'other', types: ['outbox'], queues: null, limit: 10, leaseMs: 60_000 } as const;

describe.skipIf(!postgresHarness.isAvailable)('postgres outbox enqueue on the caller’s client', () => {
  afterEach(() => postgresHarness.cleanup());

  it('leaves no job when the caller rolls back', async () => {
    const { store } = await postgresHarness.open();
    const client = await connectClient();
    try {
      await client.query('BEGIN');
      const [result] = await store.fromClient!(client).jobInsertMany({ jobs: [jobInsert({ type: 'outbox', key: 'order:1' })] });
      await client.query('ROLLBACK');
      expect(await store.jobGet({ id: result!.job.id })).toBeNull();
      expect(await store.jobClaim(claimAll)).toEqual([]);
      expect((await store.jobStats({})).byQueue).toEqual({});
    } finally {
      await client.end();
    }
  });

  it('keeps the job unclaimable by other connections until the caller commits', async () => {
    const { store } = await postgresHarness.open();
    const client = await connectClient();
    try {
      await client.query('BEGIN');
      const [result] = await store.fromClient!(client).jobInsertMany({ jobs: [jobInsert({ type: 'outbox' })] });
      expect(await store.jobClaim(claimAll)).toEqual([]);
      expect(await store.jobGet({ id: result!.job.id })).toBeNull();
      await client.query('COMMIT');
      const claimed = await store.jobClaim(claimAll);
      expect(claimed.map((job) => job.id)).toEqual([result!.job.id]);
    } finally {
      await client.end();
    }
  });

  it('undoes only the refused insert on a key conflict and leaves the caller’s transaction usable', async () => {
    const { store } = await postgresHarness.open();
    await store.jobInsertMany({ jobs: [jobInsert({ type: 'outbox', key: 'k', payload: { a: 1 } })] });
    const client = await connectClient();
    try {
      await client.query('BEGIN');
      const executor = store.fromClient!(client);
      await expect(
        executor.jobInsertMany({ jobs: [jobInsert({ type: 'outbox' }), jobInsert({ type: 'outbox', key: 'k', payload: { a: 2 } })] }),
      ).rejects.toMatchObject({ code: 'MR_ERR_KEY_CONFLICT' });
      const [kept] = await executor.jobInsertMany({ jobs: [jobInsert({ type: 'outbox', payload: { kept: true } })] });
      await client.query('COMMIT');
      const pending = await store.jobList({ status: 'pending', type: 'outbox' });
      expect(pending.map((job) => job.id)).toEqual([expect.any(String), kept!.job.id]);
      expect(pending).toHaveLength(2);
    } finally {
      await client.end();
    }
  });

  it('commits each call by itself on a client outside a transaction', async () => {
    const { store } = await postgresHarness.open();
    const client = await connectClient();
    try {
      const [result] = await store.fromClient!(client).jobInsertMany({ jobs: [jobInsert({ type: 'outbox', key: 'solo' })] });
      expect((await store.jobGet({ id: result!.job.id }))?.status).toBe('pending');
    } finally {
      await client.end();
    }
  });

  it('publishes on the caller’s client: a refused publish leaves the transaction usable, a rollback leaves nothing, autocommit commits', async () => {
    const { store } = await postgresHarness.open();
    await store.endpointAdd({ tenant: 'acme', url: 'https://hooks.example.com/in', description: null, eventTypes: null, rateLimit: null, metadata: null, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', addedBy: 'operator' });
    const publish = (tenant: string, i: number) => ({ tenant, type: 'invoice.paid', key: null, job: jobInsert({ type: 'deliver' }), payloadJson: JSON.stringify({ i }) });
    const client = await connectClient();
    try {
      await client.query('BEGIN');
      const executor = store.fromClient!(client);
      // A NUL is not text to PostgreSQL (22021): the publish fails, in its own savepoint.
      await expect(executor.messagePublish(publish('ac\u0000me', 0))).rejects.toThrow();
      const kept = await executor.messagePublish(publish('acme', 1));
      expect(await store.messageGet({ id: kept.message.id })).toBeNull();
      await client.query('COMMIT');
      expect(await store.messageGet({ id: kept.message.id })).not.toBeNull();
      expect((await store.jobGet({ id: kept.deliveries[0]!.jobId! }))?.status).toBe('pending');

      await client.query('BEGIN');
      const undone = await executor.messagePublish(publish('acme', 2));
      await client.query('ROLLBACK');
      expect(await store.messageGet({ id: undone.message.id })).toBeNull();
      expect(await store.jobGet({ id: undone.deliveries[0]!.jobId! })).toBeNull();

      const alone = await executor.messagePublish(publish('acme', 3));
      expect((await store.jobGet({ id: alone.deliveries[0]!.jobId! }))?.status).toBe('pending');
      expect((await store.messageList({ tenant: 'acme' })).map((message) => message.id)).toEqual([kept.message.id, alone.message.id]);
    } finally {
      await client.end();
    }
  });

  it('runs store.transaction on one connection: the caller’s write and the job commit or roll back together', async () => {
    const { store, url } = await postgresHarness.open();
    const schema = new URL(url).searchParams.get('schema')!;
    await expect(
      store.transaction!(async (tx) => {
        await tx.jobInsertMany({ jobs: [jobInsert({ type: 'outbox', key: 'rolled' })] });
        throw new Error('caller changed their mind');
      }),
    ).rejects.toThrow('caller changed their mind');
    expect(await store.jobClaim(claimAll)).toEqual([]);
    const id = await store.transaction!(async (tx) => {
      const [result] = await tx.jobInsertMany({ jobs: [jobInsert({ type: 'outbox', key: 'committed' })] });
      // The caller's own statement sees the uncommitted job: same connection, same transaction.
      const own = await (tx.client as pg.PoolClient).query(`SELECT count(*)::int AS n FROM "${schema}".mailroom_job WHERE key = 'committed'`);
      expect(own.rows[0].n).toBe(1);
      return result!.job.id;
    });
    expect((await store.jobClaim(claimAll)).map((job) => job.id)).toEqual([id]);
  });
});

describe.skipIf(!postgresHarness.isAvailable)('postgres group order across transactions', () => {
  afterEach(() => postgresHarness.cleanup());

  it('makes a second enqueue into a group wait until an open transaction holding that group commits', async () => {
    const { store, url } = await postgresHarness.open();
    const schema = new URL(url).searchParams.get('schema')!;
    const client = await connectClient();
    const admin = await connectClient();
    try {
      await client.query('BEGIN');
      const [first] = await store.fromClient!(client).jobInsertMany({ jobs: [jobInsert({ type: 'outbox', group: 'customer:1' })] });
      const second = store.jobInsertMany({ jobs: [jobInsert({ type: 'outbox', group: 'customer:1' })] });
      // The second insert is parked on the group's advisory lock (visible in pg_locks), not finished.
      await waitFor(
        async () =>
          Number(
            (
              await admin.query(
                `SELECT count(*) AS n FROM pg_locks
                 WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1
                   AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
                [`mailroom.group.${schema}.customer:1`],
              )
            ).rows[0].n,
          ) > 0,
        { description: 'the second enqueue to wait on the group lock' },
      );
      expect(await store.jobClaim(claimAll)).toEqual([]);
      await client.query('COMMIT');
      const [later] = await second;
      expect(BigInt(later!.job.id)).toBeGreaterThan(BigInt(first!.job.id));
      const claimed = await store.jobClaim(claimAll);
      expect(claimed.map((job) => job.id)).toEqual([first!.job.id]);
    } finally {
      await client.end();
      await admin.end();
    }
  });
});
