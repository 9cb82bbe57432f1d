// Fault: SIGTERM a worker process with 50 handlers in flight (a deploy). Half finish
// within the grace period, half would run for a minute and honour their abort. After the
// signal the worker claims nothing; the finished ones are done; the rest are pending with
// their attempts unchanged and claimable at once; the process exits 0 within the grace
// period plus 5 s.

import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';
import { cleanupFaults, readLedger, startFaultWorker, tempDir } from './kit.js';

const IN_FLIGHT = 50;
const WAITING = 30;
const GRACE_MS = 3_000;

describe.each(storeHarnesses)('SIGTERM of a busy worker on $name', (harness) => {
  afterEach(async () => {
    cleanupFaults();
    await closeTestMailrooms(harness);
  });

  it.runIf(harness.isAvailable)(
    'claims nothing after the signal, finishes what it can, hands back the rest uncharged and exits 0 in time',
    async () => {
      const { mr, url } = await openTestMailroom(harness);
      const ledger = join(tempDir(), 'ledger.txt');
      // The first 50 (claimed first, by id) alternate: 1.5 s (finishes in the grace period)
      // and 60 s (aborted at the deadline). The last 30 wait behind them.
      const jobs = await mr.enqueueMany(
        Array.from({ length: IN_FLIGHT + WAITING }, (_, i) => ({ type: 'effect', payload: { ms: i % 2 === 0 ? 1_500 : 60_000 } })),
      );
      const worker = await startFaultWorker({ db: url, ledger, concurrency: IN_FLIGHT, prefetch: 0, leaseMs: 5_000, stopTimeoutMs: GRACE_MS });
      await waitFor(() => readLedger(ledger).length === IN_FLIGHT, { timeoutMs: 15_000, description: '50 handlers to be running' });

      const signalledAt = Date.now();
      worker.kill('SIGTERM');
      const exit = await worker.exited;
      const exitMs = exit.atMs - signalledAt;
      expect(exit.code).toBe(0);
      expect(exitMs).toBeLessThan(GRACE_MS + 5_000);

      const stoppingAt = Number(worker.lines.find((line) => line.startsWith('stopping '))!.split(' ')[1]);
      const claims = worker.lines.filter((line) => line.startsWith('claimed ')).map((line) => Number(line.split(' ')[1]));
      expect(claims.filter((at) => at >= stoppingAt)).toEqual([]);
      const executions = readLedger(ledger);
      expect(executions).toHaveLength(IN_FLIGHT); // nothing started after the signal either

      const finished = new Set(executions.filter((e) => e.ending === 'effect').map((e) => e.jobId));
      const details = await Promise.all(jobs.map((job) => mr.getJob(job.id)));
      const handedBack: string[] = [];
      for (const detail of details) {
        if (finished.has(detail!.id)) {
          expect(detail!.status).toBe('done');
          expect(detail!.attempts).toBe(1);
        } else {
          expect(detail!.status).toBe('pending');
          expect(detail!.attempts).toBe(0);
          expect(detail!.runAt.getTime()).toBeLessThanOrEqual(Date.now());
          if (detail!.attemptsLog.some((a) => a.outcome === 'handed_back')) handedBack.push(detail!.id);
        }
      }
      expect(finished.size).toBe(IN_FLIGHT / 2);
      expect(handedBack).toHaveLength(IN_FLIGHT / 2);

      // Claimable at once: the next worker gets every unfinished job without waiting.
      const next = await mr.store.jobClaim({ workerId: 'next', types: ['effect'], queues: null, limit: 100, leaseMs: 1_000 });
      expect(next).toHaveLength(IN_FLIGHT / 2 + WAITING);
      expect(next.every((job) => job.attempts === 1)).toBe(true);
      console.log(
        `[faults] ${harness.name} SIGTERM: inFlight=${IN_FLIGHT} finishedInGrace=${finished.size} handedBackUncharged=${handedBack.length} ` +
          `claimsAfterSignal=0 exitCode=0 exitMs=${exitMs} (grace ${GRACE_MS} + 5000)`,
      );
    },
    45_000,
  );
});
