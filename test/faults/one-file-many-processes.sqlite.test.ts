// SQLite only: the embedded store's normal deployment, several processes on one database
// file on one host. `mailroom serve` takes signed webhooks (and runs their jobs), four
// worker processes run enqueued jobs, and a reader runs `mailroom stats` and `mailroom
// jobs` in a loop, on 10,000 jobs. SQLite has one writer at a time, so every process
// queues for the write lock: no busy or lock error may reach a caller or a sender (a
// 503 with Retry-After only if a deadline truly passes), no job runs twice at once, every
// acknowledged job ends done, and the WAL stays bounded while readers hold snapshots.

import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { sqliteHarness } from '../harness/sqlite.js';
import { waitFor } from '../harness/wait.js';
import { CLI_MAIN, analyseLedger, boundedAgent, cleanupFaults, postSigned, readLedger, spawnTsx, startFaultWorker, startServe, tempDir, writeServeConfig } from './kit.js';

const ENQUEUED = 8_000;
const WEBHOOKS = 2_000;
const WAL_LIMIT_BYTES = 64 * 1024 * 1024;

describe('one SQLite file, many processes', () => {
  afterEach(async () => {
    cleanupFaults();
    await closeTestMailrooms(sqliteHarness);
  });

  it('serve, four workers and a CLI reader share 10,000 jobs with no lock error, no job twice at once and a bounded WAL', async () => {
    const { mr, url } = await openTestMailroom(sqliteHarness);
    const dbPath = url.replace(/^sqlite:/, '');
    const dir = tempDir();
    const ledger = join(dir, 'ledger.txt');
    const serve = await startServe({ db: url, config: writeServeConfig(dir), ledger, cwd: dir, env: { FAULT_WORK_MS: '2' } });
    const workers = await Promise.all(Array.from({ length: 4 }, () => startFaultWorker({ db: url, ledger, concurrency: 10, leaseMs: 5_000 })));
    const startedAt = Date.now();

    // The reader: one CLI process after another until the jobs are through.
    let isReading = true;
    const readerFailures: string[] = [];
    let reads = 0;
    const reader = (async () => {
      for (let n = 0; isReading; n++) {
        const args = n % 2 === 0 ? ['stats', '--db', url, '--json'] : ['jobs', '--db', url, '--status', 'pending', '--limit', '50', '--json'];
        const child = spawnTsx(CLI_MAIN, args, {});
        const exit = await child.exited;
        reads++;
        if (exit.code !== 0) readerFailures.push(`${args[0]}: ${child.stderr().trim().split('\n').at(-1)}`);
      }
    })();
    let walPeakBytes = 0;
    const walWatch = setInterval(() => {
      try {
        walPeakBytes = Math.max(walPeakBytes, statSync(`${dbPath}-wal`).size);
      } catch {
        // no WAL file at this instant (checkpointed and truncated)
      }
    }, 50);

    // The load: enqueues from this process in batches, webhooks from eight senders.
    const enqueued: string[] = [];
    const enqueue = (async () => {
      for (let batch = 0; batch < ENQUEUED / 100; batch++) {
        const jobs = await mr.enqueueMany(Array.from({ length: 100 }, () => ({ type: 'effect', payload: { ms: 1 + Math.floor(Math.random() * 4) } })));
        enqueued.push(...jobs.map((job) => job.id));
      }
    })();
    const agent = boundedAgent(8);
    const answers = new Map<number, number>();
    let missingRetryAfter = 0;
    const senders = Array.from({ length: 8 }, async (_, lane) => {
      for (let n = lane; n < WEBHOOKS; n += 8) {
        for (;;) {
          const result = await postSigned(serve.url, `many_${n}`, agent);
          answers.set(result.status, (answers.get(result.status) ?? 0) + 1);
          if (result.status === 202 || result.status === 200) break;
          if (result.status === 503 && !result.retryAfter) missingRetryAfter++;
          await new Promise((resolve) => setTimeout(resolve, 100)); // a sender's back-off, not a sync point
        }
      }
    });
    await Promise.all([enqueue, ...senders]);
    agent.destroy();

    await waitFor(
      async () => {
        const { pending, running } = (await mr.stats()).byStatus;
        return pending === 0 && running === 0;
      },
      { timeoutMs: 120_000, intervalMs: 250, description: 'every job to finish' },
    );
    const drainedMs = Date.now() - startedAt;
    isReading = false;
    await reader;
    clearInterval(walWatch);

    const stats = (await mr.stats()).byStatus;
    expect(stats.done).toBe(ENQUEUED + WEBHOOKS);
    expect(stats.dead).toBe(0);
    // Senders only ever saw 202, or a 503 with Retry-After: no 500, no bare lock error.
    expect([...answers.keys()].filter((status) => status !== 202 && status !== 200 && status !== 503)).toEqual([]);
    expect(missingRetryAfter).toBe(0);
    expect(readerFailures).toEqual([]);
    expect(reads).toBeGreaterThan(0);
    expect(walPeakBytes).toBeLessThan(WAL_LIMIT_BYTES);
    const report = analyseLedger(readLedger(ledger), new Map());
    expect(report.overlaps).toEqual([]);
    const jobsPerSecond = Math.round(((ENQUEUED + WEBHOOKS) / drainedMs) * 1000);
    console.log(
      `[faults] sqlite one file, serve + 4 workers + CLI reader: jobs=${ENQUEUED + WEBHOOKS} in ${drainedMs} ms (${jobsPerSecond} jobs/s end to end) ` +
        `answers=${JSON.stringify(Object.fromEntries(answers))} readerRuns=${reads} walPeakMB=${(walPeakBytes / 1024 / 1024).toFixed(1)} overlaps=0`,
    );
    for (const child of [serve, ...workers]) child.kill('SIGTERM');
    for (const child of [serve, ...workers]) expect((await child.exited).code).toBe(0);
  }, 180_000);
});
