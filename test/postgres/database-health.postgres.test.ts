// PostgreSQL-only: the vacuum-horizon and dead-row metrics (capabilities.databaseHealth).
// SQLite has no vacuum horizon, so these series do not exist there (metrics.test.ts
// checks that they are absent). The oldest open transaction is a property of a whole
// database, and the test needs a role of its own: so it runs on a throwaway cluster
// (initdb + pg_ctl on a free port, test/faults/pg-cluster.ts), a fresh database per test.
// On the shared server any other test's open transaction would move the figure, and a
// DROP DATABASE there once waited past the hook timeout behind the other suites' load.

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Mailroom } from '../../src/mailroom.js';
import { MailroomMetrics } from '../../src/metrics/metrics.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { findPostgresBinOrWarn, startThrowawayCluster } from '../faults/pg-cluster.js';
import type { ThrowawayCluster } from '../faults/pg-cluster.js';
import { waitFor } from '../harness/wait.js';

const IS_CI = process.env.CI === 'true';
const bin = findPostgresBinOrWarn('the PostgreSQL health metrics tests');

let cluster: ThrowawayCluster | null = null;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  if (!bin) return;
  cluster = await startThrowawayCluster(bin);
}, 120_000);

afterAll(() => {
  cluster?.destroy();
  cluster = null;
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A URL on the throwaway cluster, for `database` (and `user` when given). */
function clusterUrl(database: string, user?: string): string {
  if (!cluster) throw new Error('initdb/pg_ctl not found: install the PostgreSQL server package');
  const url = new URL(cluster.url);
  url.pathname = `/${database}`;
  if (user !== undefined) url.username = user;
  return url.toString();
}

/** A fresh database on the throwaway cluster; its URL, for `user` when given. */
async function freshDatabase(): Promise<{ name: string; urlFor(user?: string): string }> {
  const name = `mr_h_${randomBytes(6).toString('hex')}`;
  const admin = await connect(clusterUrl('postgres'));
  await admin.query(`CREATE DATABASE ${name}`);
  return { name, urlFor: (user?: string) => clusterUrl(name, user) };
}

async function openMailroom(url: string, migrate = true): Promise<Mailroom> {
  const store = await PostgresStore.open({ url });
  const mr = await Mailroom.open({ store, migrate, logger: pino({ level: 'silent' }) });
  cleanups.push(async () => {
    await mr.close();
    await store.close();
  });
  return mr;
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  cleanups.push(() => client.end().catch(() => undefined));
  return client;
}

/** The value of one sample line, exactly as exposed. */
function sample(body: string, series: string): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const OLDEST = 'mailroom_pg_oldest_transaction_age_seconds';

describe.skipIf(!bin && !IS_CI)('PostgreSQL health metrics', () => {
  it('reports the age of an open writing transaction while it stays open, and drops it at commit', async () => {
    const db = await freshDatabase();
    const mr = await openMailroom(db.urlFor());
    // statsCacheMs 0: every render reads the server, so the polls below see it move.
    const metrics = new MailroomMetrics(mr, { statsCacheMs: 0, processMetrics: false });
    const scrape = async () => (await metrics.render()).body;
    expect(sample(await scrape(), OLDEST)).toBeLessThan(1);

    const holder = await connect(db.urlFor());
    await holder.query('BEGIN');
    await holder.query('SELECT txid_current()');
    // It grows with the clock: past one second, then past two, while the scrapes go on.
    await waitFor(async () => (sample(await scrape(), OLDEST) ?? 0) >= 1, { timeoutMs: 15_000, intervalMs: 100, description: 'the age to pass 1 s' });
    await waitFor(async () => (sample(await scrape(), OLDEST) ?? 0) >= 2, { timeoutMs: 15_000, intervalMs: 100, description: 'the age to pass 2 s' });

    await holder.query('COMMIT');
    await waitFor(async () => (sample(await scrape(), OLDEST) ?? Infinity) < 1, { timeoutMs: 10_000, intervalMs: 100, description: 'the age to drop after COMMIT' });
  });

  it('leaves out a session idle in a read-committed transaction, which holds back nothing, and counts a repeatable-read reader', async () => {
    const db = await freshDatabase();
    const mr = await openMailroom(db.urlFor());
    const health = () => mr.store.databaseHealth!({});
    const observer = await connect(db.urlFor());
    const idle = await connect(db.urlFor());
    // Read committed: the snapshot is released when the statement ends, so nothing is held back.
    await idle.query('BEGIN');
    await idle.query('SELECT 1');
    const idlePid = (await idle.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
    const idleAgeMs = async () =>
      Number((await observer.query('SELECT extract(epoch FROM now() - xact_start)::float8 * 1000 AS ms FROM pg_stat_activity WHERE pid = $1', [idlePid])).rows[0].ms);
    await waitFor(async () => (await idleAgeMs()) >= 3_000, { timeoutMs: 15_000, intervalMs: 50, description: 'the idle transaction to be 3 s old' });
    expect((await health()).oldestTransactionAgeMs).toBeLessThan(1_000);

    const reader = await connect(db.urlFor());
    await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await reader.query('SELECT count(*) FROM mailroom_job');
    const seen = await waitFor(async () => {
      const result = await health();
      return result.oldestTransactionAgeMs >= 500 && result;
    }, { timeoutMs: 15_000, intervalMs: 50, description: 'the reader to be counted' });
    // Counting the idle session would have given at least its age (3 s and more) here.
    expect(seen.oldestTransactionAgeMs).toBeLessThan((await idleAgeMs()) - 1_500);
    await reader.query('COMMIT');
    await waitFor(async () => (await health()).oldestTransactionAgeMs < 500, { timeoutMs: 10_000, intervalMs: 50, description: 'the figure to drop once only the idle session is left' });
    await idle.query('COMMIT');
  });

  it('exports the dead row versions of the job table, which grow as jobs change state', async () => {
    const db = await freshDatabase();
    const mr = await openMailroom(db.urlFor());
    const metrics = new MailroomMetrics(mr, { statsCacheMs: 0, processMetrics: false });
    const jobs = await mr.enqueueMany(Array.from({ length: 20 }, () => ({ type: 'noop', payload: {} })));
    for (const job of jobs) await mr.cancel(job.id);
    // Table statistics reach the cumulative statistics system within about a second.
    await waitFor(async () => (sample((await metrics.render()).body, 'mailroom_pg_dead_tuples{table="mailroom_job"}') ?? 0) >= 20, {
      timeoutMs: 15_000,
      intervalMs: 100,
      description: 'dead tuples of mailroom_job to reach 20',
    });
    const body = (await metrics.render()).body;
    for (const table of ['mailroom_attempt', 'mailroom_event', 'mailroom_queue_count']) {
      expect(sample(body, `mailroom_pg_dead_tuples{table="${table}"}`), table).toBeGreaterThanOrEqual(0);
    }
  });

  it('never fails a scrape when the role may not see other roles\' sessions: those sessions do not count', async () => {
    const db = await freshDatabase();
    const owner = await openMailroom(db.urlFor());
    const role = `mr_h_role_${randomBytes(4).toString('hex')}`;
    const admin = await connect(db.urlFor());
    await admin.query(`CREATE ROLE ${role} LOGIN`);
    await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
    const restricted = await openMailroom(db.urlFor(role), false);
    const metrics = new MailroomMetrics(restricted, { statsCacheMs: 0, processMetrics: false });

    // The superuser's transaction: the owner sees it age, the restricted role does not.
    const holder = await connect(db.urlFor());
    await holder.query('BEGIN');
    await holder.query('SELECT txid_current()');
    await waitFor(async () => (await owner.store.databaseHealth!({})).oldestTransactionAgeMs >= 1_000, { timeoutMs: 15_000, intervalMs: 50, description: 'the owner to see 1 s' });
    const { body } = await metrics.render();
    expect(sample(body, 'mailroom_store_up')).toBe(1);
    expect(sample(body, OLDEST)).toBeLessThan(1);
    expect(sample(body, 'mailroom_pg_dead_tuples{table="mailroom_job"}')).toBeGreaterThanOrEqual(0);
    await holder.query('COMMIT');
  });
});
