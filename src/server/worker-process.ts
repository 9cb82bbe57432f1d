// The `worker` process, composed: one worker for the registered tasks (which also starts
// retention and the cron schedules), stopped gracefully on a signal: no new claims, running
// handlers get the deadline, the rest go back uncharged.

import type { Logger } from '../log.js';
import type { Mailroom } from '../mailroom.js';
import type { Worker, WorkerOptions } from '../worker/worker.js';

export interface WorkerProcessOptions {
  /** An open Mailroom with its tasks registered; its opener closes it. */
  readonly mr: Mailroom;
  /** @default mr.log */
  readonly log?: Logger;
  readonly worker?: WorkerOptions;
}

/** How a process stops on signals. */
export interface StopOnOptions {
  /** Deadline for running handlers (and in-flight requests) after the first signal. */
  readonly timeoutMs: number;
  /**
   * A second signal: stop waiting, hand every held job back uncharged now
   * (`worker.stopNow()`), and return; the caller exits the process right after.
   */
  readonly stopNowSignal?: Promise<NodeJS.Signals>;
}

/** A running worker process. */
export interface WorkerProcess {
  readonly worker: Worker;
  /** Wait for `stopSignal` (SIGTERM/SIGINT), then stop the worker gracefully, logging both steps. */
  stopOn(stopSignal: Promise<NodeJS.Signals>, options: StopOnOptions): Promise<NodeJS.Signals>;
}

/**
 * Runs `graceful`, unless `stopNowSignal` comes first: then hands back what `worker` holds
 * at once and resolves without waiting for `graceful` (the process is about to exit).
 */
export async function stopGracefullyUnlessHurried(
  graceful: Promise<void>,
  worker: Worker | null,
  stopNowSignal: Promise<NodeJS.Signals> | undefined,
  log: Logger,
): Promise<'graceful' | 'now'> {
  const now = stopNowSignal?.then(async (signal) => {
    log.warn({ signal }, 'second signal: handing back every held job uncharged and stopping now');
    await worker?.stopNow();
    return 'now' as const;
  });
  return Promise.race([graceful.then(() => 'graceful' as const), ...(now ? [now] : [])]);
}

/**
 * Start the worker.
 * @throws Error when no task is registered: such a worker would claim nothing, ever (the
 *   message is the CLI's line, so it carries no code whose hint would repeat it).
 */
export function startWorkerProcess(options: WorkerProcessOptions): WorkerProcess {
  const { mr } = options;
  const log = options.log ?? mr.log;
  // A store with outgoing endpoints gives the worker the built-in deliver task to run.
  if (mr.taskTypes().length === 0 && !mr.isDelivering) {
    throw new Error('No tasks to run: add tasks to mailroom.config.js (or pass --config PATH) so the worker has handlers.');
  }
  const worker = mr.work(options.worker);
  return {
    worker,
    async stopOn(stopSignal, { timeoutMs, stopNowSignal }) {
      const signal = await stopSignal;
      log.info({ signal, shutdownTimeoutMs: timeoutMs }, 'stopping: no new claims, waiting for running handlers');
      const how = await stopGracefullyUnlessHurried(worker.stop({ timeoutMs }), worker, stopNowSignal, log);
      log.info({ workerId: worker.id }, how === 'now' ? 'worker stopped at once' : 'worker stopped');
      return signal;
    },
  };
}
