// PostgreSQL only: worker processes whose wall clocks are five minutes off, one ahead and
// one behind (a host whose NTP failed). On PostgreSQL every lease, rescue, retry and
// delay is measured on the database's clock, so skewed workers must neither rescue a live
// lease early nor run a job twice at once nor push retries out by their skew. SQLite has
// no clock but the process's own: several processes on one file share a host and so a
// clock, and the claim this test checks does not apply there.

import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { postgresHarness } from '../harness/postgres.js';
import { waitFor } from '../harness/wait.js';
import { analyseLedger, cleanupFaults, readLedger, startFaultWorker, tempDir } from './kit.js';

const LEASE_MS = 1_500;
const FIVE_MINUTES_MS = 5 * 60_000;

describe('workers with skewed clocks on PostgreSQL', () => {
  afterEach(async () => {
    cleanupFaults();
    await closeTestMailrooms(postgresHarness);
  });

  it.runIf(postgresHarness.isAvailable)(
    'keep the database clock: no early rescue, no job twice at once, retries on time',
    async () => {
      const { mr, url } = await openTestMailroom(postgresHarness);
      const ledger = join(tempDir(), 'ledger.txt');
      // Long jobs (three leases long: only heartbeats keep them) and short ones that fail
      // a third of the time after their effect (so retries are scheduled by the skewed
      // workers' outcomes).
      const long = await mr.enqueueMany(Array.from({ length: 4 }, () => ({ type: 'effect', payload: { ms: LEASE_MS * 3 } })));
      const short = await mr.enqueueMany(
        Array.from({ length: 200 }, () => ({
          type: 'effect',
          payload: { ms: 5 + Math.floor(Math.random() * 40), failRate: 0.3 },
          options: { maxAttempts: 20 }, // 0.3^20: none parks by chance
        })),
      );
      // A job a minute out: an idle worker sleeps until it is due, measured on the store's
      // clock (on its own clock, five minutes fast, it would find it overdue and spin).
      await mr.enqueue('effect', { ms: 1 }, { delayMs: 60_000 });
      const options = { db: url, ledger, concurrency: 5, leaseMs: LEASE_MS };
      const skewed = (ms: number) => ({ FAULT_CLOCK_SKEW_MS: String(ms), FAULT_REPORT_IDLE: '1' });
      const ahead = await startFaultWorker({ ...options, env: skewed(FIVE_MINUTES_MS) });
      const behind = await startFaultWorker({ ...options, env: skewed(-FIVE_MINUTES_MS) });

      const startedAt = Date.now();
      for (const job of [...long, ...short]) {
        await waitFor(async () => (await mr.getJob(job.id))?.status === 'done', {
          timeoutMs: 30_000,
          description: `job ${job.id} done (a retry pushed out by a skewed clock would wait five minutes)`,
        });
      }
      const drainMs = Date.now() - startedAt;

      for (const job of long) {
        const detail = (await mr.getJob(job.id))!;
        // No rescue of a lease that heartbeats kept alive: one attempt, nothing `lost`.
        expect(detail.attempts).toBe(1);
        expect(detail.attemptsLog.map((a) => a.outcome)).toEqual(['done']);
      }
      const lostAnywhere = [];
      for (const job of short) {
        const detail = (await mr.getJob(job.id))!;
        lostAnywhere.push(...detail.attemptsLog.filter((a) => a.outcome === 'lost'));
      }
      expect(lostAnywhere).toEqual([]);
      // Idle now (only the delayed job is left): a second's claims, after the drain.
      const idleRates = await Promise.all(
        [ahead, behind].map(async (worker) => {
          const reports = () => worker.lines.filter((line) => line.startsWith('idleClaims '));
          const before = reports().length;
          await waitFor(() => reports().length > before, { description: 'a full second of idle claims' });
          return Number(reports().at(-1)!.split(' ')[2]);
        }),
      );
      const report = analyseLedger(readLedger(ledger), new Map());
      expect(report.overlaps).toEqual([]);
      const byPid = new Map<number, number>();
      for (const e of readLedger(ledger)) byPid.set(e.pid, (byPid.get(e.pid) ?? 0) + 1);
      // Both skewed workers did real work.
      expect(byPid.get(ahead.pid) ?? 0).toBeGreaterThan(0);
      expect(byPid.get(behind.pid) ?? 0).toBeGreaterThan(0);
      // pollMs is 50 in the fault worker: at most ~20 idle claims a second, not ~1,000.
      expect(idleRates[0]).toBeLessThanOrEqual(25);
      expect(idleRates[1]).toBeLessThanOrEqual(25);
      console.log(
        `[faults] postgres clock skew ±5 min: jobs=${long.length + short.length} executions=${report.executions} ` +
          `retries=${report.duplicateExecutions} overlaps=0 lost=0 drainMs=${drainMs} runsAhead=${byPid.get(ahead.pid)} runsBehind=${byPid.get(behind.pid)} ` +
          `idleClaimsPerSecond=${idleRates.join('/')}`,
      );
      for (const worker of [ahead, behind]) worker.kill('SIGTERM');
      expect((await ahead.exited).code).toBe(0);
      expect((await behind.exited).code).toBe(0);
    },
    60_000,
  );
});
