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

/** A running worker process. */
export interface WorkerProcess {
  readonly worker: Worker;
  /** Wait for `stopSignal` (SIGTERM/SIGINT), then stop the worker gracefully, logging both steps. */
  stopOn(stopSignal: Promise<NodeJS.Signals>, options: { readonly timeoutMs: number }): Promise<NodeJS.Signals>;
}

/**
 * Start the worker.
 * @throws Error when no task is registered: such a worker would claim nothing, ever (the
 *   message is the CLI's line, so it carries no code whose hint would repeat it).
 */
export function startWorkerProcess(options: WorkerProcessOptions): WorkerProcess {
  const { mr } = options;
  const log = options.log ?? mr.log;
  if (mr.taskTypes().length === 0) {
    throw new Error('No tasks to run: add tasks to mailroom.config.js (or pass --config PATH) so the worker has handlers.');
  }
  const worker = mr.work(options.worker);
  return {
    worker,
    async stopOn(stopSignal, { timeoutMs }) {
      const signal = await stopSignal;
      log.info({ signal, shutdownTimeoutMs: timeoutMs }, 'stopping: no new claims, waiting for running handlers');
      await worker.stop({ timeoutMs });
      log.info({ workerId: worker.id }, 'worker stopped');
      return signal;
    },
  };
}
