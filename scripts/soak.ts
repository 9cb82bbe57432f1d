// Soak test (not in CI): `npm run soak -- --minutes 10 [--db URL]`.
// Runs `mailroom serve` (ingress + a worker for the event task) and two worker processes
// against one store, with signed webhook senders that retry until acknowledged, an app
// that enqueues jobs, handlers that fail at random after their effect, and chaos: worker
// kill -9s, worker SIGTERMs and serve kill -9s with restarts. Then it stops the chaos,
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

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '10' }, db: { type: 'string' } } });
const minutes = Number(values.minutes);
if (!(minutes > 0)) throw new Error('--minutes must be a positive number');
const dir = tempDir('mailroom-soak-');
const db = values.db ?? `sqlite:${join(dir, 'soak.db')}`;
const ledger = join(dir, 'ledger.txt');
const config = writeServeConfig(dir);
const FAIL_RATE = '0.1';
const log = (line: string) => console.log(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`);

const mr = await Mailroom.open({ db, logger: pino({ level: 'silent' }) });
const deaths = new Map<number, number>();
const chaos = { workerKills: 0, workerTerms: 0, serveKills: 0, nonZeroTermExits: 0 };

const serveEnv = { FAULT_FAIL_RATE: FAIL_RATE, FAULT_WORK_MS: '30' };
let serve: Child & { url: string } = await startServe({ db, config, ledger, cwd: dir, env: serveEnv });
const startWorker = () =>
  startFaultWorker({ db, ledger, concurrency: 20, leaseMs: 2_000, stopTimeoutMs: 2_000 });
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
      await new Promise((resolve) => setTimeout(resolve, 100));
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
    await new Promise((resolve) => setTimeout(resolve, 20)); // pacing: about 250 jobs/s
  }
}

async function chaosStep(): Promise<void> {
  const roll = Math.random();
  if (roll < 0.45) {
    const index = Math.floor(Math.random() * workers.length);
    const victim = workers[index]!;
    victim.kill('SIGKILL');
    deaths.set(victim.pid, (await victim.exited).atMs);
    chaos.workerKills++;
    workers[index] = await startWorker();
  } else if (roll < 0.75) {
    const index = Math.floor(Math.random() * workers.length);
    const victim = workers[index]!;
    victim.kill('SIGTERM');
    const exit = await victim.exited;
    if (exit.code !== 0) chaos.nonZeroTermExits++;
    chaos.workerTerms++;
    workers[index] = await startWorker();
  } else {
    serve.kill('SIGKILL');
    deaths.set(serve.pid, (await serve.exited).atMs);
    chaos.serveKills++;
    serve = await startServe({ db, config, ledger, cwd: dir, env: serveEnv });
  }
}

const startedAt = Date.now();
const endAt = startedAt + minutes * 60_000;
const load = Promise.all([sender(0), sender(1), sender(2), sender(3), enqueuer()]);
log(`store ${db.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')}; running ${minutes} min of load and chaos`);
let lastReport = Date.now();
while (Date.now() < endAt) {
  await new Promise((resolve) => setTimeout(resolve, 3_000 + Math.random() * 7_000)); // chaos interval, not a sync point
  if (Date.now() >= endAt) break;
  await chaosStep();
  if (Date.now() - lastReport > 30_000) {
    lastReport = Date.now();
    const s = (await mr.stats()).byStatus;
    log(`acked deliveries=${ackedDeliveries.size} enqueues=${ackedJobs.size} ${JSON.stringify(s)} chaos=${JSON.stringify(chaos)}`);
  }
}
isLoading = false;
await load;
agent.destroy();
log('load stopped; draining');

const drainStart = Date.now();
for (;;) {
  const { pending, running } = (await mr.stats()).byStatus;
  if (pending === 0 && running === 0) break;
  if (Date.now() - drainStart > 120_000) {
    log(`drain did not finish in 120 s: pending=${pending} running=${running}`);
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 250));
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
process.exit(ok ? 0 : 1);
