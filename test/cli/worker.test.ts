// `mailroom worker` in-process on every store: it runs the configured tasks, enqueue from
// the CLI picks up the configured task policy, and SIGTERM stops it gracefully (exit 0,
// a handler that honours its abort is handed back uncharged).

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';
import { removeTempDirs, runCommand, runJson, startCommand, tempDir } from './run-command.js';

/** A project directory with a config whose tasks live in modules beside it. */
function projectWithTasks(): string {
  const dir = tempDir();
  writeFileSync(
    join(dir, 'mailroom.config.mjs'),
    `export default {
      tasks: {
        echo: { module: './echo.mjs', queue: 'work', maxAttempts: 4 },
        hold: { module: './hold.mjs', queue: 'work' },
      },
    };\n`,
  );
  writeFileSync(join(dir, 'echo.mjs'), `export default async function echo(payload) { return payload; }\n`);
  // Waits until aborted, then honours the abort (as a well-behaved handler does).
  writeFileSync(
    join(dir, 'hold.mjs'),
    `export default async function hold(payload, ctx) {
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      throw ctx.signal.reason ?? new Error('aborted');
    }\n`,
  );
  return dir;
}

describe.each(storeHarnesses)('mailroom worker on $name', (harness) => {
  afterEach(async () => {
    await closeTestMailrooms(harness);
    removeTempDirs();
  });

  it.runIf(harness.isAvailable)('runs jobs enqueued from the CLI with the configured policy, then exits 0 on SIGTERM', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const cwd = projectWithTasks();
    const job = await runJson(['enqueue', 'echo', '--db', url, '--payload', '{"n":1}'], { cwd });
    // The config's task policy applied to a CLI enqueue: its queue and attempt budget.
    expect(job).toMatchObject({ queue: 'work', maxAttempts: 4 });

    const worker = startCommand(['worker', '--db', url, '--concurrency', '2', '--poll', '20ms'], {
      cwd,
      env: { MAILROOM_LOG_LEVEL: 'info' },
    });
    await waitFor(async () => (await mr.getJob(job.id))?.status === 'done', { timeoutMs: 10_000, description: `job ${job.id} to be done` });
    worker.signal('SIGTERM');
    const result = await worker.done;
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const lines = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['worker started', 'worker stopped']));
    expect(lines.find((l) => l.msg === 'worker started')).toMatchObject({ concurrency: 2, types: ['echo', 'hold'] });
  });

  it.runIf(harness.isAvailable)("takes the config's worker block, with flags winning over it", async () => {
    const { url } = await openTestMailroom(harness);
    const cwd = projectWithTasks();
    writeFileSync(
      join(cwd, 'mailroom.config.mjs'),
      `export default {
        worker: { concurrency: 3, prefetch: 7, queues: ['work'] },
        tasks: { echo: { module: './echo.mjs', queue: 'work' } },
      };\n`,
    );
    const started = async (args: string[]) => {
      const worker = startCommand(['worker', '--db', url, ...args], { cwd, env: { MAILROOM_LOG_LEVEL: 'info' } });
      await waitFor(() => worker.stdout().includes('worker started'), { timeoutMs: 10_000, description: 'worker started' });
      worker.signal('SIGTERM');
      const result = await worker.done;
      expect(result.code).toBe(0);
      return result.stdout.trim().split('\n').map((line) => JSON.parse(line)).find((l) => l.msg === 'worker started');
    };
    expect(await started([])).toMatchObject({ concurrency: 3, prefetch: 7, queues: ['work'] });
    expect(await started(['--prefetch', '500', '--concurrency', '5'])).toMatchObject({ concurrency: 5, prefetch: 500, queues: ['work'] });
    expect(await started(['--all-queues'])).toMatchObject({ concurrency: 3, queues: 'all' });
    const both = await runCommand(['worker', '--db', url, '--queues', 'work', '--all-queues'], { cwd });
    expect(both).toMatchObject({ code: 2, stderr: expect.stringContaining('--queues or --all-queues, not both') });
  });

  it.runIf(harness.isAvailable)('hands a running job back uncharged when its handler honours the stop deadline', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const cwd = projectWithTasks();
    const job = await runJson(['enqueue', 'hold', '--db', url], { cwd });
    // 2 s, not less: the worker aborts handlers a quarter of the deadline before it, and a
    // loaded machine needs that slice to settle and write the hand-back.
    const worker = startCommand(['worker', '--db', url, '--queues', 'work', '--poll', '20ms', '--shutdown-timeout', '2s'], { cwd });
    await waitFor(async () => (await mr.getJob(job.id))?.status === 'running', { timeoutMs: 10_000, description: 'the hold job to start' });
    worker.signal('SIGINT');
    const result = await worker.done;
    expect(result.code).toBe(0);
    const after = (await mr.getJob(job.id))!;
    expect(after.status).toBe('pending');
    expect(after.attempts).toBe(0);
    expect(after.attemptsLog.map((a) => a.outcome)).toEqual(['handed_back']);
  });

  it.runIf(harness.isAvailable)('refuses to start without configured tasks, in one line', async () => {
    const { url } = await openTestMailroom(harness);
    const result = await runCommand(['worker', '--db', url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('mailroom worker: No tasks to run: add tasks to mailroom.config.js (or pass --config PATH) so the worker has handlers.\n');
  });
});
