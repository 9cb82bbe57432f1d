// Fault: a worker process is paused (SIGSTOP, from outside, as a debugger, a frozen VM or
// an overloaded host would) while it runs two jobs and holds two more in its buffer, for
// longer than its lease. A second worker takes all four over. Then the first resumes
// (SIGCONT). Its handlers honour their signal, and their waits were due during the pause,
// so on resume they would go straight on to their effect; the worker's lease deadlines
// must stop them first, and the buffered jobs must never start.

import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';
import { cleanupFaults, readLedger, startFaultWorker, tempDir } from './kit.js';

const LEASE_MS = 1_000;
/** Each handler waits this long: due while the first worker is paused. */
const WORK_MS = 1_500;

function claimedIds(lines: readonly string[]): string[] {
  return lines.filter((line) => line.startsWith('claimed ')).flatMap((line) => line.split(' ')[2]!.split(','));
}

describe.each(storeHarnesses)('a paused worker on $name', (harness) => {
  afterEach(async () => {
    cleanupFaults();
    await closeTestMailrooms(harness);
  });

  it.runIf(harness.isAvailable)(
    'runs no handler of its old jobs on after SIGCONT and starts none of its buffered jobs',
    async () => {
      const { mr, url } = await openTestMailroom(harness);
      const ledger = join(tempDir(), 'ledger.txt');
      const jobs = await mr.enqueueMany(Array.from({ length: 4 }, (_, n) => ({ type: 'effect', payload: { ms: WORK_MS, n } })));
      const ids = jobs.map((job) => job.id).sort();

      const first = await startFaultWorker({ db: url, ledger, concurrency: 2, prefetch: 2, leaseMs: LEASE_MS });
      await waitFor(() => claimedIds(first.lines).length === 4 && readLedger(ledger).length === 2, {
        description: 'the first worker to run two jobs and buffer two',
      });
      first.kill('SIGSTOP');
      const before = readLedger(ledger);
      expect(before.map((e) => e.pid)).toEqual([first.pid, first.pid]);

      // The second worker rescues the expired leases and runs all four.
      const second = await startFaultWorker({ db: url, ledger, concurrency: 4, prefetch: 0, leaseMs: LEASE_MS });
      await waitFor(() => readLedger(ledger).filter((e) => e.pid === second.pid).length === 4, {
        timeoutMs: 15_000,
        description: 'the second worker to start all four jobs',
      });

      const resumedAt = Date.now();
      first.kill('SIGCONT');
      const lostLines = () => first.lines.filter((line) => line.startsWith('leaseLost '));
      await waitFor(() => lostLines().length === 4, { timeoutMs: 10_000, description: 'the first worker to give up all four leases' });
      expect(lostLines().map((line) => line.split(' ')[2]).sort()).toEqual(ids);
      expect(lostLines().every((line) => line.endsWith(' expired'))).toBe(true);

      await waitFor(() => readLedger(ledger).filter((e) => e.pid === first.pid && e.endMs !== null).length === 2, {
        description: "the first worker's handlers to stop",
      });
      // Its two handlers stopped at their signal on resume, without their effect; it
      // started nothing else (the buffered jobs included).
      const firsts = readLedger(ledger).filter((e) => e.pid === first.pid);
      expect(firsts.map((e) => [e.jobId, e.token])).toEqual(before.map((e) => [e.jobId, e.token]));
      expect(firsts.map((e) => e.ending)).toEqual(['aborted', 'aborted']);
      expect(firsts.every((e) => e.endMs! >= resumedAt)).toBe(true);

      for (const job of jobs) {
        await waitFor(async () => (await mr.getJob(job.id))?.status === 'done', { timeoutMs: 10_000, description: `job ${job.id} done` });
      }
      const effects = readLedger(ledger).filter((e) => e.ending === 'effect');
      expect(effects.map((e) => e.pid)).toEqual([second.pid, second.pid, second.pid, second.pid]);
      const abortedAfterMs = Math.max(...firsts.map((e) => e.endMs! - resumedAt));
      console.log(`[faults] ${harness.name} SIGSTOP past the lease: oldHandlersStoppedWithinMs=${abortedAfterMs} bufferedStarted=0 effectsByPausedWorker=0`);

      for (const worker of [first, second]) worker.kill('SIGTERM');
      expect((await first.exited).code).toBe(0);
      expect((await second.exited).code).toBe(0);
    },
    45_000,
  );
});
