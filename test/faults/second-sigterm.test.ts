// A second SIGTERM during a graceful stop: `mailroom worker` is stopping, waiting out
// --shutdown-timeout for handlers that ignore their signal; the orchestrator (or an
// impatient operator) signals again. What the process still holds must go back to pending
// uncharged at once, not wait for its lease to expire and keep the charged attempt.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';
import { CLI_MAIN, cleanupFaults, readLedger, spawnTsx, tempDir } from './kit.js';

const SLOW_TASK = fileURLToPath(new URL('../fixtures/faults/slow-task.mjs', import.meta.url));

describe.each(storeHarnesses)('a second SIGTERM on $name', (harness) => {
  afterEach(async () => {
    cleanupFaults();
    await closeTestMailrooms(harness);
  });

  it.runIf(harness.isAvailable)(
    'hands back the running and buffered jobs uncharged at once and exits 130, long before the shutdown timeout',
    async () => {
      const { mr, url } = await openTestMailroom(harness);
      const dir = tempDir();
      const ledger = join(dir, 'ledger.txt');
      const config = join(dir, 'mailroom.config.mjs');
      writeFileSync(config, `export default { tasks: { slow: { module: ${JSON.stringify(SLOW_TASK)} } } };\n`);
      const jobs = await mr.enqueueMany(Array.from({ length: 6 }, (_, n) => ({ type: 'slow', payload: { n } })));
      const worker = spawnTsx(
        CLI_MAIN,
        ['worker', '--db', url, '--config', config, '--concurrency', '2', '--prefetch', '4', '--shutdown-timeout', '60s', '--retention', 'off', '--json'],
        { FAULT_LEDGER: ledger, MAILROOM_LOG_LEVEL: 'info' },
        dir,
      );
      await waitFor(() => readLedger(ledger).length === 2, { timeoutMs: 20_000, description: 'two handlers to be running' });

      worker.kill('SIGTERM');
      // The graceful stop hands the four buffered jobs back and then waits for the two
      // handlers, which ignore their signal, for up to 60 s.
      await waitFor(async () => (await mr.listJobs({ status: 'pending' })).length === 4, { description: 'the buffered jobs handed back' });
      const secondAt = Date.now();
      worker.kill('SIGTERM');
      const exit = await worker.exited;
      const exitMs = exit.atMs - secondAt;
      expect(exit.code).toBe(130);
      expect(exitMs).toBeLessThan(5_000);

      for (const job of jobs) {
        const detail = (await mr.getJob(job.id))!;
        expect(detail.status).toBe('pending');
        expect(detail.attempts).toBe(0); // uncharged, the running two included
        expect(detail.leaseOwner === null || detail.leaseExpiresAt === null).toBe(true);
      }
      const running = readLedger(ledger).map((e) => e.jobId);
      for (const id of running) {
        const outcomes = (await mr.getJob(id))!.attemptsLog.map((a) => a.outcome);
        expect(outcomes).toEqual(['handed_back']);
      }
      console.log(`[faults] ${harness.name} second SIGTERM: exit=130 afterMs=${exitMs} handedBackUncharged=6 (2 running, 4 buffered)`);
    },
    40_000,
  );
});
