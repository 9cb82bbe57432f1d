// The maintenance runner on its own: periodic and timed tasks run on their schedule, a
// failure is reported and never stops a task, and stop() ends every timer and waits for
// the runs in flight. Real timers with short intervals; the tests wait on what they
// expect to have happened, never for a fixed time.

import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { MaintenanceRunner } from '../../src/maintenance/maintenance-runner.js';
import { jsonLines, logSink } from '../harness/log-sink.js';
import { waitFor } from '../harness/wait.js';

const silent = pino({ level: 'silent' });

/** A promise the test settles by hand. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('maintenance runner', () => {
  const runners: MaintenanceRunner[] = [];
  const runner = (log = silent) => {
    const made = new MaintenanceRunner(log);
    runners.push(made);
    return made;
  };
  afterEach(async () => {
    await Promise.all(runners.splice(0).map((made) => made.stop()));
  });

  it('runs a periodic task at once when asked, then again every interval', async () => {
    let runs = 0;
    runner().every({ name: 'count', intervalMs: 10, runNow: true, run: async () => void runs++ });
    expect(runs).toBe(1);
    await waitFor(() => runs >= 3, { description: 'two more runs' });
  });

  it('waits for the first interval when the task is not asked to run at once', async () => {
    let runs = 0;
    runner().every({ name: 'count', intervalMs: 10, run: async () => void runs++ });
    expect(runs).toBe(0);
    await waitFor(() => runs >= 1, { description: 'the first run' });
  });

  it('skips the ticks that come while a run of a skipWhileRunning task is still going', async () => {
    const slow = gate();
    let slowRuns = 0;
    let ticks = 0;
    const maintenance = runner();
    maintenance.every({ name: 'slow', intervalMs: 10, runNow: true, skipWhileRunning: true, run: () => (slowRuns++, slow.promise) });
    maintenance.every({ name: 'clock', intervalMs: 10, run: async () => void ticks++ });
    await waitFor(() => ticks >= 5, { description: 'five ticks of the same interval' });
    expect(slowRuns).toBe(1);
    slow.open();
    await waitFor(() => slowRuns >= 2, { description: 'the next run once the first finished' });
  });

  it('reports a failed run to the task onError and keeps the task running', async () => {
    const errors: unknown[] = [];
    runner().every({
      name: 'failing',
      intervalMs: 10,
      runNow: true,
      run: async () => {
        throw new Error('store down');
      },
      onError: (error) => errors.push(error),
    });
    await waitFor(() => errors.length >= 2, { description: 'two failures reported' });
    expect((errors[0] as Error).message).toBe('store down');
  });

  it('logs a failed run with the task name when the task has no onError', async () => {
    const sink = logSink();
    runner(pino({ level: 'debug' }, sink)).every({
      name: 'housekeeping',
      intervalMs: 60_000,
      runNow: true,
      run: () => {
        throw new Error('synchronous throw');
      },
    });
    const line = await waitFor(() => jsonLines(sink.text()).find((l) => l.msg === 'maintenance task failed; it runs again at its next time'));
    expect(line).toMatchObject({ level: 50, task: 'housekeeping', err: { message: 'synchronous throw' } });
  });

  it('runs a timed task at each time nextAt gives, asking from the previous time', async () => {
    const ran: Date[] = [];
    runner().at({ name: 'slots', nextAt: (after) => new Date(after.getTime() + 15), run: async (at) => void ran.push(at) });
    await waitFor(() => ran.length >= 3, { description: 'three timed runs' });
    expect(ran[1]!.getTime() - ran[0]!.getTime()).toBe(15);
    expect(ran[2]!.getTime() - ran[1]!.getTime()).toBe(15);
  });

  it('stop ends every task and resolves only after the runs in flight settle', async () => {
    const slow = gate();
    let isSettled = false;
    let runs = 0;
    const maintenance = runner();
    maintenance.every({
      name: 'slow',
      intervalMs: 10,
      runNow: true,
      run: async () => {
        runs++;
        await slow.promise;
        isSettled = true;
      },
    });
    let stopped = false;
    const stopping = maintenance.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    slow.open();
    await stopping;
    expect(isSettled).toBe(true);
    // A task added after stop never runs, and nothing ticks again.
    let late = 0;
    maintenance.every({ name: 'late', intervalMs: 10, runNow: true, run: async () => void late++ });
    let clockTicks = 0;
    runner().every({ name: 'clock', intervalMs: 10, run: async () => void clockTicks++ });
    await waitFor(() => clockTicks >= 3, { description: 'a few intervals on another runner' });
    expect(late).toBe(0);
    expect(runs).toBe(1);
  });

  it('stops one task without touching the others', async () => {
    const maintenance = runner();
    let stoppedRuns = 0;
    let otherRuns = 0;
    const task = maintenance.every({ name: 'stopped', intervalMs: 10, runNow: true, run: async () => void stoppedRuns++ });
    maintenance.every({ name: 'other', intervalMs: 10, run: async () => void otherRuns++ });
    await task.stop();
    await task.stop();
    await waitFor(() => otherRuns >= 3, { description: 'the other task to keep running' });
    expect(stoppedRuns).toBe(1);
  });
});
