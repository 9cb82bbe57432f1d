// One place for a process's periodic store work: each worker's rescue sweep, retention and
// the cron slots now, breaker and limit housekeeping later. It owns every timer (unref'd:
// maintenance alone never keeps a process alive), catches every failed run (to the task's
// onError, else logged; a failure never stops the task), and stop() clears every timer and
// waits for the runs in flight. A Mailroom has one; tasks start when they are added.

import type { Logger } from '../log.js';

export interface PeriodicTaskOptions {
  /** Names the task in log lines. */
  readonly name: string;
  /** Between runs, from one start to the next (setInterval). */
  readonly intervalMs: number;
  /** Also run once at once, synchronously up to the run's first await. @default false */
  readonly runNow?: boolean;
  /** Skip a tick while the previous run is still going. @default false: runs may overlap */
  readonly skipWhileRunning?: boolean;
  readonly run: () => Promise<void>;
  /** Where a failed run goes instead of the runner's log line. */
  readonly onError?: (error: unknown) => void;
}

export interface TimedTaskOptions {
  /** Names the task in log lines. */
  readonly name: string;
  /** The next time to run strictly after `after` (first asked with the current time). */
  readonly nextAt: (after: Date) => Date;
  /** Runs at `at`; the next time is asked after it settles, from `at`. */
  readonly run: (at: Date) => Promise<void>;
  /** Where a failed run goes instead of the runner's log line. */
  readonly onError?: (error: unknown) => void;
}

/** A task added to the runner. */
export interface MaintenanceTask {
  /** No more runs; resolves once the runs in flight have settled. Safe to call twice. */
  stop(): Promise<void>;
}

/** Timers longer than this overflow Node's 32-bit timer; re-arm in steps instead. */
const MAX_TIMER_MS = 2 ** 31 - 1;

class Task implements MaintenanceTask {
  timer: NodeJS.Timeout | null = null;
  isStopped = false;
  readonly inFlight = new Set<Promise<void>>();

  constructor(
    readonly name: string,
    private readonly onStop: (task: Task) => void,
  ) {}

  stop(): Promise<void> {
    if (!this.isStopped) {
      this.isStopped = true;
      // clearTimeout clears an interval too (Node shares the timer type).
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.onStop(this);
    }
    return Promise.all([...this.inFlight]).then(() => undefined);
  }
}

export class MaintenanceRunner {
  private readonly tasks = new Set<Task>();
  private isStopped = false;

  constructor(private readonly log: Logger) {}

  /**
   * Run `run` every `intervalMs`.
   * @example const sweep = runner.every({ name: 'rescue', intervalMs: 30_000, runNow: true, run: () => rescueOnce() });
   *          // later: await sweep.stop();
   */
  every(options: PeriodicTaskOptions): MaintenanceTask {
    const task = this.add(options.name);
    if (task.isStopped) return task;
    const tick = () => {
      if (task.isStopped) return;
      if (options.skipWhileRunning && task.inFlight.size > 0) return;
      this.launch(task, options.run, options.onError);
    };
    task.timer = setInterval(tick, options.intervalMs);
    task.timer.unref?.();
    if (options.runNow) tick();
    return task;
  }

  /**
   * Run at each time `nextAt` gives (a cron schedule's slots). A time that passed while
   * the process was busy runs late; a time missed while no runner ran is not caught up.
   */
  at(options: TimedTaskOptions): MaintenanceTask {
    const task = this.add(options.name);
    const arm = (after: Date): void => {
      if (task.isStopped) return;
      const at = options.nextAt(after);
      const waitMs = at.getTime() - Date.now();
      task.timer = setTimeout(
        () => {
          if (waitMs > MAX_TIMER_MS) return arm(after);
          void this.launch(task, () => options.run(at), options.onError).finally(() => arm(at));
        },
        Math.max(0, Math.min(waitMs, MAX_TIMER_MS)),
      );
      task.timer.unref?.();
    };
    arm(new Date());
    return task;
  }

  /** Stop every task; resolves once their runs in flight have settled. Safe to call twice. */
  async stop(): Promise<void> {
    this.isStopped = true;
    await Promise.all([...this.tasks].map((task) => task.stop()));
  }

  /** A task that starts stopped once the runner has stopped (nothing runs after close). */
  private add(name: string): Task {
    const task = new Task(name, (stopped) => this.tasks.delete(stopped));
    if (this.isStopped) task.isStopped = true;
    else this.tasks.add(task);
    return task;
  }

  private launch(task: Task, run: () => Promise<void>, onError: ((error: unknown) => void) | undefined): Promise<void> {
    let running: Promise<void>;
    try {
      running = run();
    } catch (error) {
      running = Promise.reject(error);
    }
    const tracked: Promise<void> = running
      .catch((error: unknown) => {
        if (onError) onError(error);
        else this.log.error({ err: error, task: task.name }, 'maintenance task failed; it runs again at its next time');
      })
      .finally(() => task.inFlight.delete(tracked));
    task.inFlight.add(tracked);
    return tracked;
  }
}
