// PostgreSQL health over a long run: `npm run pg-health -- [--jobs 1000000] [--db URL]`.
// On a throwaway cluster of its own (initdb + pg_ctl, PostgreSQL's default settings, so
// autovacuum on with its default thresholds and one-minute naptime) unless --db is given,
// it enqueues --jobs no-op jobs in batches, keeping a bounded backlog, and runs them with
// the real worker (concurrency 10, default prefetch) in this process, with retention
// purging done jobs as it goes. It times every claim round trip (the store's jobClaim, as
// the worker calls it) and samples the job table's dead and live tuples and autovacuum
// runs every two seconds. It prints, per window of completed jobs, claim p50/p95/p99 and
// the dead tuples, and exits 1 unless
//   - claim p50 and p95 at the end (the claims of the last fifth of the windows, pooled)
//     are at most CLAIM_P50_FACTOR and CLAIM_TAIL_FACTOR times the early run's (the first
//     half of the windows, pooled,
//     the first window left out: it holds the warm-up, planning and caching, and would
//     make any later figure look good). Pooled, because one window's tail is a handful of
//     claims, and on shared cores one window's came out 2.4 times its neighbours'; and
//   - autovacuum ran on the job table and left the dead tuples below RECLAIMED_FRACTION
//     of the peak before it (they were reclaimed). A short run can end before the
//     autovacuum launcher's first visit (one minute by default): it then keeps sampling,
//     up to AUTOVACUUM_WAIT_MS, for autovacuum to come.
// CI runs a shorter version (.ci/run); docs/guarantees.md has the figures of a full run.

import { parseArgs } from 'node:util';
import pg from 'pg';
import pino from 'pino';
import { Mailroom } from '../src/mailroom.js';
import { PostgresStore } from '../src/store/postgres/postgres-store.js';
import { findPostgresBin, startThrowawayCluster } from '../test/faults/pg-cluster.js';
import type { ThrowawayCluster } from '../test/faults/pg-cluster.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '1000000' },
    window: { type: 'string' },
    db: { type: 'string' },
    'retention-ms': { type: 'string', default: '30000' },
  },
});
const TOTAL_JOBS = Number(values.jobs);
if (!Number.isInteger(TOTAL_JOBS) || TOTAL_JOBS < 10_000) throw new Error('--jobs must be an integer of at least 10000');
/** Ten windows by default: 100,000 jobs each in a million. */
const WINDOW_JOBS = Number(values.window ?? Math.floor(TOTAL_JOBS / 10));
/**
 * Done jobs are purged this long after they finish, every RETENTION_INTERVAL_MS. The
 * product's default keeps them 7 days and purges every 10 minutes; a run of minutes with
 * that default would only ever insert. 30 s compresses a week of steady state, where the
 * purge deletes about as many rows as the workers finish, into the run: the table stays
 * bounded and vacuum has deletes to reclaim as well as updates.
 */
const RETENTION_MS = Number(values['retention-ms']);
const RETENTION_INTERVAL_MS = 5_000;
/** Pending jobs kept ahead of the worker: a queue that is busy, not one drained from a million. */
const BACKLOG_JOBS = 20_000;
/** An application's bulk enqueue: one INSERT per batch. */
const ENQUEUE_BATCH = 2_000;
/** The worker's default concurrency; prefetch is left at its default too. */
const CONCURRENCY = 10;
/** pg_stat_user_tables is updated about once a second; every 2 s keeps each autovacuum's drop visible. */
const SAMPLE_MS = 2_000;
/** After the load, how long to wait for a first autovacuum: its one-minute naptime and some. */
const AUTOVACUUM_WAIT_MS = 120_000;
/**
 * Claim p50 at the end may be at most CLAIM_P50_FACTOR times the early run's, and the tail
 * (CLAIM_TAIL_PERCENTILE) at most CLAIM_TAIL_FACTOR times. Dead tuples a claim walks slow
 * every claim, so the body of the distribution shows them. The tail also carries the disk:
 * a claim waits for its WAL flush (a crash must not lose a claim a worker acted on), whose
 * time varies with the other processes' I/O. One CI run on this shared machine had p50
 * level (8.8, 8.8, 6.9 ms against 7.8–9.6) and p99 2.45 times early.
 *
 * The tail is p95, not p99: since the prefetch adapts, a claim takes ~260 jobs here where it
 * took 30, so the last fifth of CI's 200,000-job run pools ~150 claims, and their p99 is the
 * second slowest, one stall of the shared disk. On 2026-12-07 the p99 check failed 3 of 5
 * clean-clone CI runs (55–81 ms against ~20 early, p50 flat at 6–10 ms, no dead tuples in
 * some of the windows); p95 is the eighth slowest. p99 is still printed.
 */
const CLAIM_P50_FACTOR = 2;
const CLAIM_TAIL_PERCENTILE = 95;
const CLAIM_TAIL_FACTOR = 3;
/** "Reclaimed": after an autovacuum, dead tuples below this fraction of the peak before it. */
const RECLAIMED_FRACTION = 0.5;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const startedAtMs = Date.now();
const elapsed = () => ((Date.now() - startedAtMs) / 1_000).toFixed(1);
const log = (line: string) => console.log(`[pg-health ${elapsed()}s] ${line}`);

let cluster: ThrowawayCluster | null = null;
if (!values.db) {
  const bin = findPostgresBin();
  if (!bin) throw new Error('pg-health needs initdb and pg_ctl under /usr/lib/postgresql, or --db URL');
  cluster = await startThrowawayCluster(bin);
}
const url = values.db ?? cluster!.url;
log(`store ${url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@')}; ${TOTAL_JOBS} jobs, windows of ${WINDOW_JOBS}, retention ${RETENTION_MS} ms`);

// ---- the claim timer: every jobClaim round trip, filed under the window it ran in ----
const store = await PostgresStore.open({ url });
let completed = 0;
const claimMsByWindow: number[][] = [];
const claimJobs: number[] = [];
const storeClaim = store.jobClaim.bind(store);
store.jobClaim = async (params) => {
  const window = Math.min(Math.floor(completed / WINDOW_JOBS), Math.ceil(TOTAL_JOBS / WINDOW_JOBS) - 1);
  const t0 = performance.now();
  const jobs = await storeClaim(params);
  // Only claims that found work: an idle poll on an empty queue is not a claim under load.
  if (jobs.length > 0) {
    (claimMsByWindow[window] ??= []).push(performance.now() - t0);
    claimJobs[window] = (claimJobs[window] ?? 0) + jobs.length;
  }
  return jobs;
};

const mr = await Mailroom.open({
  store,
  logger: pino({ level: 'warn' }),
  retention: { doneMs: RETENTION_MS, intervalMs: RETENTION_INTERVAL_MS },
});
mr.task('noop', async () => undefined);

// ---- the sampler: the job table's tuples and autovacuum runs ----
interface Sample {
  readonly atS: number;
  readonly completed: number;
  readonly live: number;
  readonly dead: number;
  readonly autovacuums: number;
  readonly tableMb: number;
}
const samples: Sample[] = [];
const reader = new pg.Client({ connectionString: url });
reader.on('error', () => undefined);
await reader.connect();
async function sampleTable(): Promise<Sample> {
  const { rows } = await reader.query(
    `SELECT n_live_tup, n_dead_tup, autovacuum_count, pg_total_relation_size(relid) AS bytes
       FROM pg_stat_user_tables WHERE relid = 'public.mailroom_job'::regclass`,
  );
  const row = rows[0];
  const sample = {
    atS: (Date.now() - startedAtMs) / 1_000,
    completed,
    live: Number(row.n_live_tup),
    dead: Number(row.n_dead_tup),
    autovacuums: Number(row.autovacuum_count),
    tableMb: Number(row.bytes) / 1_048_576,
  };
  samples.push(sample);
  return sample;
}
let isSampling = true;
const sampler = (async () => {
  while (isSampling) {
    await sampleTable().catch((error: unknown) => log(`sample failed: ${String(error)}`));
    await sleep(SAMPLE_MS); // sampling period, not a synchronisation
  }
})();

/** When an autovacuum first left the dead tuples below RECLAIMED_FRACTION of the peak before it. */
function reclaimedAtS(): number | null {
  let peakBefore = 0;
  for (let i = 1; i < samples.length; i++) {
    peakBefore = Math.max(peakBefore, samples[i - 1]!.dead);
    if (samples[i]!.autovacuums > samples[i - 1]!.autovacuums && samples[i]!.dead <= RECLAIMED_FRACTION * peakBefore) return samples[i]!.atS;
  }
  return null;
}

// ---- load: enqueue in batches, the backlog bounded; the worker runs them ----
const worker = mr.work({ concurrency: CONCURRENCY });
const windowEndS: number[] = [];
worker.on('completed', () => {
  completed++;
  if (completed % WINDOW_JOBS === 0) {
    windowEndS.push((Date.now() - startedAtMs) / 1_000);
    const last = samples.at(-1);
    log(`${completed} done; dead tuples ${last?.dead ?? '?'}, autovacuums ${last?.autovacuums ?? '?'}`);
  }
});
const loadStartS = (Date.now() - startedAtMs) / 1_000;
let enqueued = 0;
while (enqueued < TOTAL_JOBS) {
  if (enqueued - completed >= BACKLOG_JOBS) {
    await sleep(5); // pacing the producer against the backlog bound
    continue;
  }
  const n = Math.min(ENQUEUE_BATCH, TOTAL_JOBS - enqueued);
  await mr.enqueueMany(Array.from({ length: n }, () => ({ type: 'noop', payload: {} })));
  enqueued += n;
}
while (completed < TOTAL_JOBS) await sleep(50); // waiting for the worker to finish; a progress poll
const loadS = (Date.now() - startedAtMs) / 1_000 - loadStartS;
await worker.stop();
log(`load done in ${loadS.toFixed(1)} s`);
const waitUntilMs = Date.now() + AUTOVACUUM_WAIT_MS;
while (reclaimedAtS() === null && Date.now() < waitUntilMs) await sleep(SAMPLE_MS); // the sampler's period
isSampling = false;
await sampler;
const final = await sampleTable();
await reader.end();
await mr.close();
await store.close();
cluster?.destroy();

// ---- report ----
function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
const pad = (value: string | number, width: number) => String(value).padStart(width);
const rows: string[] = [];
rows.push(`| window (jobs done) | seconds | jobs/s | claims | jobs/claim | claim p50 ms | claim p95 ms | claim p99 ms | dead tuples: max / at end | live at end | autovacuums | table+indexes MB |`);
rows.push(`|---|---|---|---|---|---|---|---|---|---|---|---|`);
const windows = claimMsByWindow.length;
const p99s: number[] = [];
for (let w = 0; w < windows; w++) {
  const claims = claimMsByWindow[w] ?? [];
  const from = w * WINDOW_JOBS;
  const to = Math.min(TOTAL_JOBS, (w + 1) * WINDOW_JOBS);
  const startS = w === 0 ? loadStartS : windowEndS[w - 1]!;
  const endS = windowEndS[w] ?? final.atS;
  const inWindow = samples.filter((s) => s.completed >= from && s.completed < to);
  const last = inWindow.at(-1) ?? final;
  const p50 = percentile(claims, 50);
  const p95 = percentile(claims, 95);
  const p99 = percentile(claims, 99);
  p99s.push(p99);
  rows.push(
    `| ${from / 1000}k–${to / 1000}k | ${(endS - startS).toFixed(1)} | ${Math.round((to - from) / (endS - startS))} | ${claims.length} | ${((claimJobs[w] ?? 0) / Math.max(1, claims.length)).toFixed(1)} | ${p50.toFixed(2)} | ${p95.toFixed(2)} | ${p99.toFixed(2)} | ${Math.max(0, ...inWindow.map((s) => s.dead))} / ${last.dead} | ${last.live} | ${last.autovacuums} | ${last.tableMb.toFixed(0)} |`,
  );
}
console.log(rows.join('\n'));
console.log('\ndead tuples over time (s: dead / live, autovacuums):');
console.log(samples.filter((_, i) => i % 5 === 0 || i === samples.length - 1).map((s) => `${s.atS.toFixed(0)}s: ${s.dead}/${s.live} (${s.autovacuums})`).join('  '));

const autovacuums = final.autovacuums - (samples[0]?.autovacuums ?? 0);
const reclaimedS = reclaimedAtS();
const pooled = (from: number, to: number) => claimMsByWindow.slice(from, to).flatMap((claims) => claims ?? []);
const lateFrom = windows - Math.max(1, Math.floor(windows / 5));
const earlyPool = windows >= 3 ? pooled(1, Math.max(2, Math.ceil(windows / 2))) : pooled(0, 1);
const latePool = pooled(lateFrom, windows);
const earlyTail = percentile(earlyPool, CLAIM_TAIL_PERCENTILE);
const lateTail = percentile(latePool, CLAIM_TAIL_PERCENTILE);
const earlyP50 = percentile(earlyPool, 50);
const lateP50 = percentile(latePool, 50);
const earlyLabel = windows >= 3 ? `early run (windows 2-${Math.max(2, Math.ceil(windows / 2))})` : 'early run (window 1)';
const checks = {
  [`claim p50 at the end (windows ${lateFrom + 1}-${windows}) ${lateP50.toFixed(2)} ms <= ${CLAIM_P50_FACTOR} x ${earlyLabel} ${earlyP50.toFixed(2)} ms`]:
    lateP50 <= CLAIM_P50_FACTOR * earlyP50,
  [`claim p${CLAIM_TAIL_PERCENTILE} at the end (windows ${lateFrom + 1}-${windows}, ${latePool.length} claims) ${lateTail.toFixed(2)} ms <= ${CLAIM_TAIL_FACTOR} x ${earlyLabel} ${earlyTail.toFixed(2)} ms`]:
    lateTail <= CLAIM_TAIL_FACTOR * earlyTail,
  [`autovacuum ran on mailroom_job (${autovacuums} times)`]: autovacuums >= 1,
  [`dead tuples reclaimed: after an autovacuum below ${RECLAIMED_FRACTION} of the peak before it (${reclaimedS === null ? 'never' : `at ${reclaimedS.toFixed(0)} s; load ended at ${(loadStartS + loadS).toFixed(0)} s`})`]: reclaimedS !== null,
};
console.log(
  JSON.stringify(
    {
      jobs: TOTAL_JOBS,
      runtimeS: Number(elapsed()),
      loadS: Number(loadS.toFixed(1)),
      jobsPerS: Math.round(TOTAL_JOBS / loadS),
      claimP99MsByWindow: p99s.map((p) => Number(p.toFixed(2))),
      claimP99MsEarlyAndEnd: [Number(percentile(earlyPool, 99).toFixed(2)), Number(percentile(latePool, 99).toFixed(2))],
      peakDeadTuples: Math.max(...samples.map((s) => s.dead)),
      finalDeadTuples: final.dead,
      autovacuums,
      checks,
    },
    null,
    2,
  ),
);
const ok = Object.values(checks).every(Boolean);
log(ok ? 'HEALTHY: claim p50 and p95 flat, dead tuples reclaimed' : 'FAILED');
process.exit(ok ? 0 : 1);
