// PostgreSQL-only: several worker processes on one queue is what PostgreSQL is for (SQLite
// has one writer on one machine). Four real processes drain 10,000 jobs; an effect ledger
// they append to shows that no job ran concurrently with itself, and the total of effects
// (runs, including any duplicates after a lost lease) is reported.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresHarness } from '../harness/postgres.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { killAllWorkers, spawnWorker } from '../harness/processes.js';
import { waitFor } from '../harness/wait.js';

const PROCESSES = 4;
const JOBS = 10_000;

describe.skipIf(!postgresHarness.isAvailable)('postgres with several worker processes', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    killAllWorkers();
    await closeTestMailrooms(postgresHarness);
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('drains 10,000 jobs with 4 processes, every job done once and never concurrently with itself', { timeout: 180_000 }, async () => {
    const { mr, url } = await openTestMailroom(postgresHarness);
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-ledger-'));
    dirs.push(dir);
    const ledgerPath = join(dir, 'effects.log');
    for (let offset = 0; offset < JOBS; offset += 1_000) {
      await mr.enqueueMany(Array.from({ length: 1_000 }, (_, n) => ({ type: 'ledger', payload: { n: offset + n } })));
    }
    const started = Date.now();
    const workers = Array.from({ length: PROCESSES }, () => spawnWorker({ url, ledgerPath, concurrency: 10, prefetch: 20, leaseMs: 30_000 }));
    await waitFor(async () => (await mr.stats()).byStatus.done === JOBS, {
      timeoutMs: 150_000,
      intervalMs: 250,
      description: `all ${JOBS} jobs to be done`,
    });
    const elapsedMs = Date.now() - started;
    for (const worker of workers) worker.child.kill('SIGTERM');
    await Promise.all(workers.map((worker) => worker.exited));

    const stats = await mr.stats();
    expect(stats.byStatus).toEqual({ pending: 0, running: 0, done: JOBS, dead: 0 });

    // Replay the ledger: a job is "open" between its start and end; a second start while
    // open is a concurrent run.
    const open = new Map<string, string>();
    const runs = new Map<string, number>();
    const pids = new Set<string>();
    let overlaps = 0;
    for (const line of readFileSync(ledgerPath, 'utf8').split('\n')) {
      if (!line) continue;
      const [event, id, pid] = line.split(' ') as [string, string, string];
      pids.add(pid);
      if (event === 'start') {
        if (open.has(id)) overlaps++;
        open.set(id, pid);
        runs.set(id, (runs.get(id) ?? 0) + 1);
      } else {
        open.delete(id);
      }
    }
    const effects = [...runs.values()].reduce((sum, n) => sum + n, 0);
    const duplicates = effects - runs.size;
    console.log(
      `multi-process: ${PROCESSES} processes, ${JOBS} jobs, ${effects} effects (${duplicates} duplicate runs), ` +
        `${overlaps} concurrent runs, ${pids.size} processes did work, ${Math.round(JOBS / (elapsedMs / 1000))} jobs/s`,
    );
    expect(runs.size).toBe(JOBS);
    expect(overlaps).toBe(0);
    expect(open.size).toBe(0);
    expect(pids.size).toBe(PROCESSES);
  });
});
