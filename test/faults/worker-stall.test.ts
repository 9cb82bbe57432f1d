// Fault: a worker stalls (SIGSTOP) past its lease while running three jobs; a second
// worker rescues and takes them; then the first resumes (SIGCONT) and, at once, one of
// its handlers completes, one fails and one keeps running. The first worker's completion,
// failure, heartbeat and shutdown release must all be fenced off by the lease token: the
// final state is the second worker's. The fixture stops its own process from inside the
// last handler to start, so the stall lands at a known point (all three running) and,
// after SIGCONT, the outcomes reach the store before any heartbeat of the resumed process.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';
import { analyseLedger, cleanupFaults, readLedger, startFaultWorker, tempDir } from './kit.js';
import { asDone, asFailed } from '../harness/finishes.js';

const LEASE_MS = 1_500;

function tokensOf(lines: readonly string[]): Map<string, string> {
  const tokens = new Map<string, string>();
  for (const line of lines) {
    const [word, id, token] = line.split(' ');
    if (word === 'token') tokens.set(id!, token!);
  }
  return tokens;
}

describe.each(storeHarnesses)('a stalled worker on $name', (harness) => {
  afterEach(async () => {
    cleanupFaults();
    await closeTestMailrooms(harness);
  });

  it.runIf(harness.isAvailable)(
    "changes nothing with its heartbeat, completion or failure after SIGCONT: the final state is the second worker's",
    async () => {
      const { mr, url } = await openTestMailroom(harness);
      const dir = tempDir();
      const ledger = join(dir, 'ledger.txt');
      const release = join(dir, 'release');
      const [complete, fail, hold] = await mr.enqueueMany(
        (['complete', 'fail', 'hold'] as const).map((role) => ({ type: 'stall', payload: { role } })),
      );
      const env = { FAULT_STALL_COUNT: '3', FAULT_RELEASE_FILE: release, FAULT_VERBOSE: '1' };
      const first = await startFaultWorker({ db: url, ledger, concurrency: 3, prefetch: 0, leaseMs: LEASE_MS, stopTimeoutMs: 1_000, env });
      await first.waitForLine((line) => line.startsWith('stalling '));
      const stalledAt = Date.now();
      const firstTokens = tokensOf(first.lines);
      expect(firstTokens.size).toBe(3);

      // The second worker rescues the expired leases and runs all three (its handlers wait
      // for the release file, so it still holds them when the first one wakes up).
      const second = await startFaultWorker({ db: url, ledger, concurrency: 3, prefetch: 0, leaseMs: LEASE_MS, env });
      await waitFor(() => tokensOf(second.lines).size === 3, { timeoutMs: 15_000, description: 'the second worker to take all three jobs' });
      const takeoverMs = Date.now() - stalledAt;
      const secondTokens = tokensOf(second.lines);

      // The stale tokens write nothing, whatever the write (checked before the real resume).
      const stale = [complete!, fail!, hold!].map((job) => ({ id: job.id, leaseToken: firstTokens.get(job.id)! }));
      expect(await mr.store.jobExtendLease({ leases: stale, leaseMs: 60_000 })).toEqual([]);
      expect(await mr.store.jobFinishMany({ finishes: asDone(stale) })).toEqual([]);
      expect(
        await mr.store.jobFinishMany({ finishes: asFailed(stale.map((lease) => ({ ...lease, error: 'stale', outcome: 'failed' as const, retryDelayMs: 0 }))) }),
      ).toEqual([]);

      first.kill('SIGCONT');
      await first.waitForLine((line) => line.startsWith('leaseLost ') && line.split(' ')[2] === hold!.id);
      await waitFor(() => readLedger(ledger).filter((e) => e.pid === first.pid && e.endMs !== null).length === 2, {
        description: 'the resumed handlers to finish their late complete and fail',
      });
      // Graceful stop flushes every write the first worker still had (and releases `hold`,
      // whose handler ignores its signal, with its stale token): all fenced.
      first.kill('SIGTERM');
      expect((await first.exited).code).toBe(0);
      expect(first.lines.filter((line) => /^(completed|failed|dead) /.test(line))).toEqual([]);
      // Only `hold` saw its lease lost: `complete` and `fail` had settled before any heartbeat
      // ran, so their writes reached the store with the stale token and the store refused them.
      expect(first.lines.filter((line) => line.startsWith('leaseLost ')).map((line) => line.split(' ')[2])).toEqual([hold!.id]);

      for (const job of [complete!, fail!, hold!]) {
        const detail = (await mr.getJob(job.id))!;
        expect(detail.status).toBe('running');
        expect(detail.attempts).toBe(2);
        expect(detail.leaseOwner).toBe(second.workerId);
        expect(detail.leaseExpiresAt!.getTime()).toBeGreaterThan(Date.now());
        expect(detail.attemptsLog.map((a) => a.outcome)).toEqual(['lost']);
      }
      // The second worker's tokens are the live ones (extending them is harmless).
      const live = [complete!, fail!, hold!].map((job) => ({ id: job.id, leaseToken: secondTokens.get(job.id)! }));
      expect((await mr.store.jobExtendLease({ leases: live, leaseMs: 10_000 })).sort()).toEqual(live.map((l) => l.id).sort());

      writeFileSync(release, '');
      for (const job of [complete!, fail!, hold!]) {
        const done = await waitFor(
          async () => {
            const detail = await mr.getJob(job.id);
            return detail?.status === 'done' && detail;
          },
          { timeoutMs: 10_000, description: `job ${job.id} to be done by the second worker` },
        );
        expect(done.attemptsLog.map((a) => [a.outcome, a.workerId])).toEqual([
          ['lost', first.workerId],
          ['done', second.workerId],
        ]);
        expect(done.lastError).toBeNull();
      }
      const report = analyseLedger(readLedger(ledger), new Map());
      // The resumed handlers did run on (the stall cannot stop user code), which is the
      // documented overlap of a handler that outlives its lease; only their writes are fenced.
      console.log(
        `[faults] ${harness.name} SIGSTOP: takeoverMs=${takeoverMs} lateWritesFenced=4 (complete, fail, heartbeat, shutdown release) ` +
          `overlapsWhileStalled=${report.overlaps.length} finalOwner=second`,
      );
      second.kill('SIGTERM');
      expect((await second.exited).code).toBe(0);
    },
    45_000,
  );
});
