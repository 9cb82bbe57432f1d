// Fault: kill -9 a worker process with 1,000 jobs in flight (500 running, the rest
// prefetched), then start another. Every job must end terminal within lease + sweep + 10 s,
// none lost, and the effect ledger must show that no job ran concurrently with itself
// (the handlers honour their signal). Duplicate executions are counted and printed: they
// are what at-least-once costs, not a failure.

import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';
import { analyseLedger, cleanupFaults, readLedger, startFaultWorker, tempDir } from './kit.js';

const JOBS = 1_000;
const LEASE_MS = 2_000;
/** The rescue sweep runs about every leaseMs / 2. */
const SWEEP_MS = LEASE_MS / 2;

describe.each(storeHarnesses)('kill -9 of a busy worker on $name', (harness) => {
  afterEach(async () => {
    cleanupFaults();
    await closeTestMailrooms(harness);
  });

  it.runIf(harness.isAvailable)(
    'finishes all 1,000 jobs after a SIGKILL with none lost and no job running concurrently with itself',
    async () => {
      const { mr, url } = await openTestMailroom(harness);
      const ledger = join(tempDir(), 'ledger.txt');
      const ids: string[] = [];
      for (let chunk = 0; chunk < JOBS / 250; chunk++) {
        const jobs = await mr.enqueueMany(
          Array.from({ length: 250 }, (_, i) => ({ type: 'effect', payload: { ms: 300 + ((chunk * 250 + i) * 37) % 1_200 } })),
        );
        ids.push(...jobs.map((job) => job.id));
      }
      const options = { db: url, ledger, concurrency: 500, prefetch: 500, leaseMs: LEASE_MS };
      const first = await startFaultWorker(options);

      // Kill once plenty have finished and plenty are mid-handler.
      await waitFor(
        () => {
          const executions = readLedger(ledger);
          const ended = executions.filter((e) => e.ending === 'effect').length;
          return ended >= 150 && executions.length - ended >= 300;
        },
        { timeoutMs: 20_000, intervalMs: 20, description: 'the first worker to be busy' },
      );
      const runningBefore = (await mr.stats()).byStatus.running;
      first.kill('SIGKILL');
      const killedAt = (await first.exited).atMs;

      const second = await startFaultWorker(options);
      const bound = LEASE_MS + SWEEP_MS + 10_000;
      await waitFor(
        async () => {
          const { pending, running } = (await mr.stats()).byStatus;
          return pending === 0 && running === 0;
        },
        { timeoutMs: bound + 2_000, intervalMs: 50, description: 'every job to be terminal' },
      );
      const recoveryMs = Date.now() - killedAt;
      expect(recoveryMs).toBeLessThan(bound);

      const stats = (await mr.stats()).byStatus;
      expect(stats).toEqual({ pending: 0, running: 0, done: JOBS, dead: 0 });
      const report = analyseLedger(readLedger(ledger), new Map([[first.pid, killedAt]]));
      const cut = readLedger(ledger).filter((e) => e.pid === first.pid && e.endMs === null).length;
      // Every job's effect happened at least once, and no two runs of one job overlapped.
      expect(report.jobs).toBe(JOBS);
      expect(report.overlaps).toEqual([]);
      // Every run the kill cut short (and every prefetched job) is in the history as `lost`.
      const lost = (await Promise.all(ids.map((id) => mr.getJob(id)))).filter((job) =>
        job!.attemptsLog.some((attempt) => attempt.outcome === 'lost'),
      );
      expect(lost.length).toBeGreaterThanOrEqual(cut);
      for (const job of lost) {
        expect(job!.attemptsLog.map((a) => a.outcome)).toEqual(['lost', 'done']);
        expect(job!.attemptsLog[1]!.workerId).toBe(second.workerId);
      }
      console.log(
        `[faults] ${harness.name} kill -9: jobs=${JOBS} runningAtKill=${runningBefore} cutMidHandler=${cut} lostAttempts=${lost.length} ` +
          `executions=${report.executions} duplicateExecutions=${report.duplicateExecutions} duplicateEffects=${report.duplicateEffects} ` +
          `overlaps=${report.overlaps.length} recoveryMs=${recoveryMs} (bound ${bound}) lost=0`,
      );
      second.kill('SIGTERM');
      expect((await second.exited).code).toBe(0);
    },
    60_000,
  );
});
