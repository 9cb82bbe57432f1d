// Fault: the order example under chaos (issue 20, SPEC §3 "Transactional completion").
// 2,000 orders awaiting payment; signed payment webhooks through `mailroom serve`, each
// event delivered 1–3 times, and a third of the orders paid by two distinct events (two
// provider events about one payment), so several jobs race to pay one order. Three
// `mailroom worker` processes with a 2 s lease run test/fixtures/faults/payment-task.mjs,
// which writes the order, its fulfilment obligation and a commit ledger only inside
// ctx.complete; meanwhile workers are SIGKILLed (and restarted) and SIGSTOPped past their
// lease (and resumed) at random. At the end every order is paid exactly once, with one
// obligation and one fulfil_order job, and every committed ctx.complete is the attempt the
// job's history records as `done`: no worker whose lease was taken over committed.

import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';
import type { JobDetail } from '../../src/index.js';
import type { Mailroom } from '../../src/mailroom.js';
import {
  BUILT_CLI_MAIN,
  HOOK_TASK,
  SECRET,
  boundedAgent,
  cleanupFaults,
  openRawReader,
  retryUntilAcked,
  spawnBuilt,
  startServe,
  tempDir,
} from './kit.js';
import type { Child } from './kit.js';

const PAYMENT_TASK = fileURLToPath(new URL('../fixtures/faults/payment-task.mjs', import.meta.url));
const ORDERS = 2_000;
/** Short, so that a stop past it (and the takeover after it) costs seconds, not minutes. */
const LEASE_MS = 2_000;
/** The other workers' rescue sweep runs about every leaseMs / 2; a stop this much past the lease is taken over. */
const STOP_PAST_LEASE_MS = 1_200;
const WORKERS = 3;

/** A random integer in [0, n). */
const randomBelow = (n: number) => Math.floor(Math.random() * n);
/** Chaos pacing, not synchronisation: how long a fault lasts, how far apart faults are. */
const pace = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The deliveries, in sending order: per order one event (a third of the orders two), each
 * event delivered 1–3 times. An order's events are sent together (their jobs race for the
 * order); half of the redeliveries are sent at once beside the first (a race at the
 * ingress door), the rest after everything else (a provider retrying later).
 */
function paymentDeliveries(): string[] {
  const orders = Array.from({ length: ORDERS }, (_, i) => i + 1);
  for (let i = orders.length - 1; i > 0; i--) {
    const j = randomBelow(i + 1);
    [orders[i], orders[j]] = [orders[j]!, orders[i]!];
  }
  const now: string[] = [];
  const later: string[] = [];
  for (const order of orders) {
    const events = Math.random() < 1 / 3 ? ['a', 'b'] : ['a'];
    for (const event of events) {
      const id = `pay_${order}_${event}`;
      now.push(id);
      for (let extra = randomBelow(3); extra > 0; extra--) (Math.random() < 0.5 ? now : later).push(id);
    }
  }
  return [...now, ...later];
}

const orderOf = (deliveryId: string) => Number(deliveryId.split('_')[1]);

/** The application's tables, created through Mailroom's own connection (where ctx.complete writes). */
async function createShopTables(mr: Mailroom, tables: string): Promise<void> {
  const ddl = [
    `CREATE TABLE ${tables}orders (id INTEGER PRIMARY KEY, status TEXT NOT NULL, paid_count INTEGER NOT NULL DEFAULT 0)`,
    `INSERT INTO ${tables}orders (id, status) WITH RECURSIVE n(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM n WHERE id < ${ORDERS}) SELECT id, 'awaiting_payment' FROM n`,
    `CREATE TABLE ${tables}obligations (order_id INTEGER NOT NULL, job_id TEXT NOT NULL)`,
    `CREATE TABLE ${tables}commits (job_id TEXT NOT NULL, order_id INTEGER NOT NULL, pid INTEGER NOT NULL, attempt INTEGER NOT NULL, lease_token TEXT NOT NULL, paid INTEGER NOT NULL)`,
  ];
  await mr.transaction((tx: any) => (tx.db ? ddl.forEach((sql) => tx.db.exec(sql)) : ddl.reduce((done, sql) => done.then(() => tx.client.query(sql)), Promise.resolve())));
}

interface LeaseLostLine {
  readonly jobId: string;
  readonly pid: number;
  readonly token: string;
  readonly attempt: number;
  readonly where: 'refused' | 'fenced';
}

function readLeaseLost(path: string): LeaseLostLine[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('leaseLost '))
    .map((line) => {
      const [, jobId, pid, token, attempt, where] = line.split(' ');
      return { jobId: jobId!, pid: Number(pid), token: token!, attempt: Number(attempt), where: where as LeaseLostLine['where'] };
    });
}

/** Every job's detail, a few at a time. */
async function details(mr: Mailroom, ids: readonly string[]): Promise<JobDetail[]> {
  const out: JobDetail[] = [];
  for (let i = 0; i < ids.length; i += 100) out.push(...((await Promise.all(ids.slice(i, i + 100).map((id) => mr.getJob(id)))) as JobDetail[]));
  return out;
}

describe.each(storeHarnesses)('exactly once under chaos on $name', (harness) => {
  afterEach(async () => {
    cleanupFaults();
    await closeTestMailrooms(harness);
  });

  it.runIf(harness.isAvailable)(
    'pays every order once with one obligation, and no worker whose lease was taken over commits',
    async () => {
      const startedAt = Date.now();
      const { mr, url: db } = await openTestMailroom(harness);
      const schema = db.startsWith('postgres') ? new URL(db).searchParams.get('schema') : null;
      // In the test's Mailroom schema on PostgreSQL, so they go with it; the raw reader finds them there.
      const tables = schema ? `"${schema}".` : '';
      await createShopTables(mr, tables);

      const dir = tempDir();
      const ledger = join(dir, 'lease-lost.txt');
      const config = join(dir, 'mailroom.config.mjs');
      writeFileSync(
        config,
        `export default {
  sources: { s: { provider: 'standard', secrets: [${JSON.stringify(SECRET)}], tasks: ['payment_succeeded'] } },
  tasks: {
    payment_succeeded: { module: ${JSON.stringify(PAYMENT_TASK)} },
    fulfil_order: { module: ${JSON.stringify(HOOK_TASK)}, maxAttempts: 25 },
  },
  // serve only takes deliveries in: its worker claims from a queue no task uses. The
  // worker processes run --all-queues.
  worker: { queues: ['ingress-only'] },
};
`,
      );
      const serve = await startServe({ db, config, ledger: join(dir, 'unused-ledger.txt'), cwd: dir, built: true });
      const startWorker = async (): Promise<Child> => {
        const worker = spawnBuilt(
          BUILT_CLI_MAIN,
          ['worker', '--db', db, '--config', config, '--all-queues', '--concurrency', '8', '--prefetch', '4', '--lease', `${LEASE_MS}ms`, '--poll', '50ms', '--shutdown-timeout', '2s', '--retention', 'off', '--json'],
          { EXACTLY_TABLES: tables, EXACTLY_LEDGER: ledger, MAILROOM_LOG_LEVEL: 'info' },
          dir,
        );
        await worker.waitForLine((line) => line.includes('"worker started"'), 30_000);
        return worker;
      };
      const workers = await Promise.all(Array.from({ length: WORKERS }, startWorker));
      const reader = await openRawReader(db);
      const scalar = async (sql: string) => Number(Object.values((await reader.query(sql))[0]!)[0]);

      // The chaos: one fault at a time, alternating a stop past the lease and a kill -9
      // with a restart, each on a random worker, until every job is settled.
      const chaos = { stops: 0, kills: 0 };
      let isSettled = false;
      const runChaos = async () => {
        await waitFor(async () => (await scalar('SELECT count(*) FROM commits')) >= 50, { timeoutMs: 30_000, description: 'the first commits' });
        for (let n = 0; !isSettled; n++) {
          const index = randomBelow(workers.length);
          const victim = workers[index]!;
          if (n % 2 === 0) {
            victim.kill('SIGSTOP');
            chaos.stops++;
            await pace(LEASE_MS + STOP_PAST_LEASE_MS + randomBelow(1_000));
            victim.kill('SIGCONT');
          } else {
            victim.kill('SIGKILL');
            await victim.exited;
            chaos.kills++;
            workers[index] = await startWorker();
          }
          await pace(300 + randomBelow(700));
        }
      };
      const chaosDone = runChaos();

      const deliveries = paymentDeliveries();
      const agent = boundedAgent(32);
      const acked = await retryUntilAcked(() => serve.url, deliveries, agent, 120_000, (id) => ({ orderId: orderOf(id) }));
      agent.destroy();
      const ingestedAt = Date.now();
      await waitFor(
        async () => {
          const { pending, running } = (await mr.stats()).byStatus;
          return pending === 0 && running === 0 && (await scalar('SELECT count(*) FROM obligations')) === ORDERS;
        },
        { timeoutMs: 90_000, intervalMs: 200, description: 'every job to be settled' },
      );
      isSettled = true;
      await chaosDone;
      const settledAt = Date.now();

      // Every delivery acknowledged; the door kept one event, so one job, per event id.
      const events = new Set(deliveries);
      expect(acked).toHaveLength(deliveries.length);
      expect(acked.filter((r) => r.status === 202)).toHaveLength(events.size);
      const payments = await mr.listJobs({ type: 'payment_succeeded', limit: 10_000 });
      expect(payments).toHaveLength(events.size);
      const jobs = await details(mr, payments.map((job) => job.id));
      expect(jobs.filter((job) => job.status !== 'done').map((job) => [job.id, job.status])).toEqual([]);

      // Every order paid exactly once, with one obligation and one fulfilment job.
      expect(await scalar("SELECT count(*) FROM orders WHERE status <> 'paid' OR paid_count <> 1")).toBe(0);
      expect(await scalar('SELECT count(*) FROM obligations')).toBe(ORDERS);
      expect(await scalar('SELECT count(DISTINCT order_id) FROM obligations')).toBe(ORDERS);
      const fulfilments = await mr.listJobs({ type: 'fulfil_order', limit: 10_000 });
      expect(fulfilments).toHaveLength(ORDERS);
      expect(new Set(fulfilments.map((job) => job.key)).size).toBe(ORDERS);
      expect(fulfilments.filter((job) => job.status !== 'done')).toEqual([]);

      // Exactly one commit per job, made by the attempt its history records as done (the
      // worker id is host:pid:random); none by an attempt that ended lost.
      const commits = await reader.query('SELECT job_id, order_id, pid, attempt, lease_token, paid FROM commits');
      const commitsByJob = new Map<string, Array<Record<string, unknown>>>();
      for (const row of commits) commitsByJob.set(String(row.job_id), [...(commitsByJob.get(String(row.job_id)) ?? []), row]);
      const strays: unknown[] = [];
      for (const job of jobs) {
        const done = job.attemptsLog.filter((a) => a.outcome === 'done');
        const mine = commitsByJob.get(job.id) ?? [];
        const isTheDoneAttempt =
          done.length === 1 && mine.length === 1 && Number(mine[0]!.attempt) === done[0]!.attempt && Number(mine[0]!.pid) === Number(done[0]!.workerId?.split(':').at(-2));
        if (!isTheDoneAttempt) strays.push({ job: job.id, history: job.attemptsLog.map((a) => [a.attempt, a.outcome, a.workerId]), commits: mine });
      }
      expect(strays).toEqual([]);
      expect(commits).toHaveLength(jobs.length);
      expect(commits.filter((row) => Number(row.paid) === 1)).toHaveLength(ORDERS);

      // The chaos reached the fence: attempts were lost (kills and stops), and handlers
      // resumed past their lease had ctx.complete refuse; none of those left a commit.
      const lostAttempts = jobs.reduce((sum, job) => sum + job.attemptsLog.filter((a) => a.outcome === 'lost').length, 0);
      const leaseLost = readLeaseLost(ledger);
      const tokens = new Set(commits.map((row) => `${row.job_id} ${row.lease_token}`));
      expect(leaseLost.filter((line) => tokens.has(`${line.jobId} ${line.token}`))).toEqual([]);
      expect(chaos.stops).toBeGreaterThanOrEqual(1);
      expect(lostAttempts).toBeGreaterThanOrEqual(1);
      expect(leaseLost.length).toBeGreaterThanOrEqual(1);

      console.log(
        `[faults] ${harness.name} exactly once under chaos: orders=${ORDERS} deliveriesAcked=${acked.length} (new=${events.size} duplicate=${acked.length - events.size}) ` +
          `jobs=${jobs.length} stops=${chaos.stops} kills=${chaos.kills} lostAttempts=${lostAttempts} jobsWithLost=${jobs.filter((j) => j.attemptsLog.some((a) => a.outcome === 'lost')).length} ` +
          `leaseLostErrors=${leaseLost.length} (refused=${leaseLost.filter((l) => l.where === 'refused').length} fenced=${leaseLost.filter((l) => l.where === 'fenced').length}) ` +
          `doublePaid=0 strayCommits=0 ingestMs=${ingestedAt - startedAt} totalMs=${settledAt - startedAt}`,
      );
      await reader.close();
      for (const child of [...workers, serve]) child.kill('SIGTERM');
      await Promise.all([...workers, serve].map((child) => child.exited));
    },
    180_000,
  );
});
