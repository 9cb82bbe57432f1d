// Soak test: `npm run soak -- --minutes 10 [--db URL | --pg-throwaway]` (CI runs two
// minutes on each store).
// Runs `mailroom serve` (ingress + a worker for the event task) and two worker processes
// against one store, with signed webhook senders that retry until acknowledged, an app
// that enqueues jobs, handlers that fail at random after their effect, and chaos: worker
// kill -9s, worker SIGTERMs, serve kill -9s with restarts, workers paused (SIGSTOP) for
// up to 0.4 of their lease, and on PostgreSQL every connection dropped at once; with
// --pg-throwaway (a cluster of its own, initdb + pg_ctl) also the server crashed and
// restarted under load. Then it stops the chaos,
// lets everything drain and reconciles: every acknowledged delivery id has exactly one
// event and its job is terminal, every acknowledged enqueue exists and is terminal;
// lost = 0. Exits 1 when any check fails. Default store: a fresh SQLite file.

import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { Mailroom } from '../src/mailroom.js';
import {
  analyseLedger,
  boundedAgent,
  cleanupFaults,
  openRawReader,
  postSigned,
  readLedger,
  startFaultWorker,
  startServe,
  tempDir,
  writeServeConfig,
} from '../test/faults/kit.js';
import type { Child } from '../test/faults/kit.js';
import { findPostgresBin, startThrowawayCluster } from '../test/faults/pg-cluster.js';
import type { ThrowawayCluster } from '../test/faults/pg-cluster.js';

const { values } = parseArgs({
  options: { minutes: { type: 'string', default: '10' }, db: { type: 'string' }, 'pg-throwaway': { type: 'boolean', default: false } },
});
const minutes = Number(values.minutes);
if (!(minutes > 0)) throw new Error('--minutes must be a positive number');
const dir = tempDir('mailroom-soak-');
let cluster: ThrowawayCluster | null = null;
if (values['pg-throwaway']) {
  const bin = findPostgresBin();
  if (!bin) throw new Error('--pg-throwaway needs initdb and pg_ctl under /usr/lib/postgresql');
  cluster = await startThrowawayCluster(bin);
}
const db = cluster?.url ?? values.db ?? `sqlite:${join(dir, 'soak.db')}`;
const isPostgres = db.startsWith('postgres');
const LEASE_MS = 2_000;
const ledger = join(dir, 'ledger.txt');
const config = writeServeConfig(dir);
const FAIL_RATE = '0.1';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`);

const mr = await Mailroom.open({ db, logger: pino({ level: 'silent' }) });
const deaths = new Map<number, number>();
const chaos = { workerKills: 0, workerTerms: 0, serveKills: 0, workerPauses: 0, connectionDrops: 0, pgRestarts: 0, nonZeroTermExits: 0 };

const serveEnv = { FAULT_FAIL_RATE: FAIL_RATE, FAULT_WORK_MS: '30' };
let serve: Child & { url: string } = await startServe({ db, config, ledger, cwd: dir, env: serveEnv });
const startWorker = () =>
  startFaultWorker({ db, ledger, concurrency: 20, leaseMs: LEASE_MS, stopTimeoutMs: 2_000 });
const workers: Array<Child & { workerId: string }> = [await startWorker(), await startWorker()];

let isLoading = true;
const ackedDeliveries = new Set<string>();
const ackedJobs = new Set<string>();
let refusedPosts = 0;
let refusedEnqueues = 0;
const agent = boundedAgent(32);

async function sender(lane: number): Promise<void> {
  for (let n = 0; isLoading; n++) {
    const id = `soak_${lane}_${n}`;
    for (;;) {
      const result = await postSigned(serve.url, id, agent, 's', 5_000);
      if (result.status === 202 || result.status === 200) break;
      refusedPosts++;
      await sleep(100);
    }
    ackedDeliveries.add(id);
  }
}

async function enqueuer(): Promise<void> {
  while (isLoading) {
    try {
      const jobs = await mr.enqueueMany(
        Array.from({ length: 5 }, () => ({ type: 'effect', payload: { ms: 5 + Math.floor(Math.random() * 100), failRate: Number(FAIL_RATE) } })),
      );
      for (const job of jobs) ackedJobs.add(job.id);
    } catch {
      refusedEnqueues++;
    }
    await sleep(20); // pacing: about 250 jobs/s
  }
}

/** Every backend of this database but the one asking: what a failover or a proxy restart does. */
async function dropConnections(): Promise<void> {
  const reader = await openRawReader(db);
  try {
    await reader.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  } finally {
    await reader.close().catch(() => undefined);
  }
}

type ChaosKind = 'workerKill' | 'workerTerm' | 'serveKill' | 'workerPause' | 'connectionDrop' | 'pgRestart';
/** Relative weights; a kind the store cannot have is left out. */
const CHAOS_WEIGHTS: Array<[ChaosKind, number]> = (
  [
    ['workerKill', 30],
    ['workerTerm', 20],
    ['serveKill', 15],
    ['workerPause', 20],
    ['connectionDrop', isPostgres ? 10 : 0],
    ['pgRestart', cluster ? 5 : 0],
  ] as Array<[ChaosKind, number]>
).filter(([, weight]) => weight > 0);
// Every kind once first, in a random order, so that even a short run (CI's two minutes)
// has each of them; then at random by weight.
const firstRound: ChaosKind[] = CHAOS_WEIGHTS.map(([kind]) => kind).sort(() => Math.random() - 0.5);

function nextChaos(): ChaosKind {
  const first = firstRound.shift();
  if (first) return first;
  let roll = Math.random() * CHAOS_WEIGHTS.reduce((sum, [, weight]) => sum + weight, 0);
  for (const [kind, weight] of CHAOS_WEIGHTS) {
    roll -= weight;
    if (roll < 0) return kind;
  }
  return 'workerKill';
}

async function replaceWorker(signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
  const index = Math.floor(Math.random() * workers.length);
  const victim = workers[index]!;
  victim.kill(signal);
  const exit = await victim.exited;
  if (signal === 'SIGKILL') deaths.set(victim.pid, exit.atMs);
  else if (exit.code !== 0) chaos.nonZeroTermExits++;
  workers[index] = await startWorker();
}

async function chaosStep(): Promise<void> {
  switch (nextChaos()) {
    case 'workerKill':
      await replaceWorker('SIGKILL');
      chaos.workerKills++;
      return;
    case 'workerTerm':
      await replaceWorker('SIGTERM');
      chaos.workerTerms++;
      return;
    case 'serveKill':
      serve.kill('SIGKILL');
      deaths.set(serve.pid, (await serve.exited).atMs);
      chaos.serveKills++;
      serve = await startServe({ db, config, ledger, cwd: dir, env: serveEnv });
      return;
    case 'workerPause': {
      // Paused for up to 0.4 of the lease: heartbeats are late and the worker's lease
      // deadline may pass (handlers aborted, buffered jobs handed back), the store's lease
      // does not, so no other worker can have started those jobs meanwhile.
      const victim = workers[Math.floor(Math.random() * workers.length)]!;
      victim.kill('SIGSTOP');
      await sleep(100 + Math.random() * (LEASE_MS * 0.4 - 100));
      victim.kill('SIGCONT');
      chaos.workerPauses++;
      return;
    }
    case 'connectionDrop':
      await dropConnections().then(
        () => void chaos.connectionDrops++,
        (error: unknown) => log(`connection drop failed: ${String(error)}`),
      );
      return;
    case 'pgRestart':
      cluster!.crash();
      await sleep(500 + Math.random() * 1_500);
      cluster!.start();
      chaos.pgRestarts++;
      return;
  }
}

const startedAt = Date.now();
const endAt = startedAt + minutes * 60_000;
const load = Promise.all([sender(0), sender(1), sender(2), sender(3), enqueuer()]);
log(`store ${db.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')}; running ${minutes} min of load and chaos`);
let lastReport = Date.now();
while (Date.now() < endAt) {
  await sleep(3_000 + Math.random() * 7_000); // chaos interval, not a sync point
  if (Date.now() >= endAt) break;
  await chaosStep();
  if (Date.now() - lastReport > 30_000) {
    lastReport = Date.now();
    const s = await mr.stats().then((stats) => JSON.stringify(stats.byStatus), () => 'stats unavailable');
    log(`acked deliveries=${ackedDeliveries.size} enqueues=${ackedJobs.size} ${s} chaos=${JSON.stringify(chaos)}`);
  }
}
isLoading = false;
await load;
agent.destroy();
log('load stopped; draining');

// The load is open-loop, so the backlog it leaves grows with --minutes (on a quiet machine
// five minutes left 168,000 jobs, more than any fixed wait drains). What fails the drain is
// a stall: DRAIN_STALL_MS without one job leaving pending or running.
const DRAIN_STALL_MS = 60_000;
const drainStart = Date.now();
let left = Infinity;
let lastProgressAt = drainStart;
for (;;) {
  const stats = await mr.stats().catch(() => null);
  if (stats === null) {
    await sleep(250);
    continue;
  }
  const { pending, running } = stats.byStatus;
  if (pending === 0 && running === 0) break;
  if (pending + running < left) {
    left = pending + running;
    lastProgressAt = Date.now();
  }
  if (Date.now() - lastProgressAt > DRAIN_STALL_MS) {
    log(`drain stalled for ${DRAIN_STALL_MS / 1000} s: pending=${pending} running=${running}`);
    break;
  }
  await sleep(250);
}
const drainMs = Date.now() - drainStart;

// Reconciliation.
const reader = await openRawReader(db);
const events = await reader.query("SELECT delivery_id AS d, count(*) AS n FROM mailroom_event WHERE source = 's' GROUP BY delivery_id");
const eventCounts = new Map(events.map((row) => [String(row.d), Number(row.n)]));
const eventJobs = await reader.query(
  "SELECT e.delivery_id AS d, j.status AS s FROM mailroom_event e JOIN mailroom_job j ON j.event_id = e.id WHERE e.source = 's'",
);
const jobsByDelivery = new Map<string, string[]>();
for (const row of eventJobs) jobsByDelivery.set(String(row.d), [...(jobsByDelivery.get(String(row.d)) ?? []), String(row.s)]);
const effectRows = await reader.query("SELECT id, status FROM mailroom_job WHERE type = 'effect'");
const effectStatus = new Map(effectRows.map((row) => [String(row.id), String(row.status)]));
const integrity = db.startsWith('sqlite') ? String(Object.values((await reader.query('PRAGMA integrity_check'))[0]!)[0]) : 'n/a';
await reader.close();

const isTerminal = (status: string) => status === 'done' || status === 'dead';
const lostDeliveries = [...ackedDeliveries].filter((id) => !eventCounts.has(id)).length;
const duplicateEvents = [...eventCounts.values()].filter((n) => n !== 1).length;
const deliveriesNotOneJob = [...ackedDeliveries].filter((id) => (jobsByDelivery.get(id) ?? []).length !== 1).length;
const eventJobsNotTerminal = [...ackedDeliveries].filter((id) => !(jobsByDelivery.get(id) ?? []).every(isTerminal)).length;
const lostJobs = [...ackedJobs].filter((id) => !effectStatus.has(id)).length;
const jobsNotTerminal = [...ackedJobs].filter((id) => !isTerminal(effectStatus.get(id) ?? '')).length;
const stats = (await mr.stats()).byStatus;
const report = analyseLedger(readLedger(ledger), deaths);

for (const worker of workers) worker.kill('SIGTERM');
serve.kill('SIGTERM');
await Promise.all([...workers.map((w) => w.exited), serve.exited]);
await mr.close();

// Each overlap in full, so a failure can be read and not only counted.
const iso = (ms: number | null) => (ms === null ? 'never' : new Date(ms).toISOString().slice(11, 23));
const describeRun = (e: (typeof report.overlaps)[number]['first']) =>
  `pid ${e.pid} attempt ${e.attempt} token ${e.token} ${iso(e.startMs)} -> ${iso(e.endMs)} (${e.ending ?? `no end line${deaths.has(e.pid) ? `; process killed ${iso(deaths.get(e.pid)!)}` : ''}`})`;
for (const overlap of report.overlaps) {
  log(`OVERLAP job ${overlap.jobId}: first ${describeRun(overlap.first)}; second ${describeRun(overlap.second)}`);
}

const figures = {
  minutes,
  store: db.startsWith('sqlite') ? 'sqlite' : 'postgres',
  ackedDeliveries: ackedDeliveries.size,
  ackedEnqueues: ackedJobs.size,
  refusedPosts,
  refusedEnqueues,
  chaos,
  finalStatus: stats,
  drainMs,
  lost: lostDeliveries + lostJobs,
  lostDeliveries,
  lostJobs,
  duplicateEvents,
  deliveriesWithoutExactlyOneJob: deliveriesNotOneJob,
  notTerminal: eventJobsNotTerminal + jobsNotTerminal,
  executions: report.executions,
  duplicateExecutions: report.duplicateExecutions,
  duplicateEffects: report.duplicateEffects,
  abortedBySignal: readLedger(ledger).filter((e) => e.ending === 'aborted').length,
  overlaps: report.overlaps.length,
  integrity,
};
console.log(JSON.stringify(figures, null, 2));
const ok =
  figures.lost === 0 &&
  duplicateEvents === 0 &&
  deliveriesNotOneJob === 0 &&
  figures.notTerminal === 0 &&
  figures.overlaps === 0 &&
  chaos.nonZeroTermExits === 0 &&
  (integrity === 'ok' || integrity === 'n/a');
log(ok ? 'RECONCILED: lost = 0' : 'FAILED reconciliation');
cleanupFaults();
cluster?.destroy();
process.exit(ok ? 0 : 1);
