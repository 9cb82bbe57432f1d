// PostgreSQL-only: several processes can migrate one PostgreSQL schema at the same moment
// (`serve` and `worker` starting together); SQLite's migrator is serialised by its single
// write lock instead. Here the advisory lock keyed by the schema must make the late
// comers wait, re-read the ledger and find nothing to do. Also: schemas isolate stores.
import { describe, it, expect, afterEach } from 'vitest';
import { jobInsert } from '../harness/factory.js';
import { waitFor } from '../harness/wait.js';
import { loadMigrations } from '../../src/store/migrations.js';
import { connectClient, freshSchemaName, openPostgresStore, postgresHarness } from '../harness/postgres.js';

describe.skipIf(!postgresHarness.isAvailable)('postgres migrations under concurrency', () => {
  afterEach(() => postgresHarness.cleanup());

  it('lets concurrent migrators of one fresh schema all succeed and applies each version once', async () => {
    const schema = freshSchemaName();
    const stores = await Promise.all(Array.from({ length: 4 }, () => openPostgresStore(schema, 2)));
    const results = await Promise.all(stores.map((store) => store.migrate()));
    const latest = (await stores[0]!.schemaVersion()).code;
    // Every version the dialect has (a number reserved by another branch may be absent).
    const every = loadMigrations(new URL('../../src/store/postgres/migrations/', import.meta.url)).map((m) => m.version);
    expect(every.at(-1)).toBe(latest);
    expect(results.map((result) => result.version)).toEqual([latest, latest, latest, latest]);
    expect(results.flatMap((result) => result.applied)).toEqual(every);
    const admin = await connectClient();
    try {
      const ledger = await admin.query(`SELECT version, count(*)::int AS n FROM "${schema}".mailroom_migration GROUP BY version ORDER BY version`);
      expect(ledger.rows).toEqual(every.map((version) => ({ version, n: 1 })));
    } finally {
      await admin.end();
    }
  });

  it('keeps two schemas of one database apart: jobs, counters and wake-ups', async () => {
    const first = await postgresHarness.open();
    const second = await postgresHarness.open();
    const woken: Array<string | null> = [];
    const unsubscribe = await second.store.subscribe!((queue) => woken.push(queue));
    await first.store.jobInsertMany({ jobs: [jobInsert({ type: 'iso', queue: 'only-first' })] });
    // A wake-up on the second schema's channel proves the second's insert is delivered and
    // (being later on the same server) that the first's would have arrived before it.
    await second.store.jobInsertMany({ jobs: [jobInsert({ type: 'iso', queue: 'only-second' })] });
    await waitFor(() => woken.includes('only-second'), { description: 'the second schema’s wake-up' });
    expect(woken).toEqual(['only-second']);
    expect(Object.keys((await second.store.jobStats({})).byQueue)).toEqual(['only-second']);
    expect(await second.store.jobClaim({ workerId: 'w', types: ['iso'], queues: ['only-first'], limit: 1, leaseMs: 1_000 })).toEqual([]);
    await unsubscribe();
  });

  it('describes itself without the password', async () => {
    const { PostgresStore } = await import('../../src/store/postgres/postgres-store.js');
    const store = await PostgresStore.open({ url: 'postgres://alice:s3cr3t-pw@db.example:5432/app?schema=jobs' });
    expect(store.description).toContain('alice:***@db.example:5432/app');
    expect(store.description).toContain('"jobs"');
    expect(store.description).not.toContain('s3cr3t');
    await store.close();
  });

  it('reports an unreachable server as StoreUnavailableError, not a raw driver error', async () => {
    const { PostgresStore } = await import('../../src/store/postgres/postgres-store.js');
    const store = await PostgresStore.open({ url: 'postgres://postgres@127.0.0.1:1/test' });
    await expect(store.ping()).rejects.toMatchObject({ code: 'MR_ERR_STORE_UNAVAILABLE' });
    await store.close();
  });
});
