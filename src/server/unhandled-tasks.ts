// Jobs for a task no process handles wait forever, quietly: a source that fans out to a
// misspelt task, a schedule naming one. A process that runs workers says so at start for
// each one its own registry lacks (another process may have the handler, so a warning,
// not a refusal); and for a queue it was told to work that nothing it knows of uses.

import type { MailroomConfig } from '../config/define-config.js';
import type { Logger } from '../log.js';
import type { Mailroom } from '../mailroom.js';

export function warnAboutUnhandledTasks(config: MailroomConfig | null | undefined, types: readonly string[], log: Logger): void {
  for (const [name, source] of Object.entries(config?.sources ?? {})) {
    for (const entry of source.tasks ?? []) {
      const task = typeof entry === 'string' ? entry : entry.task;
      if (!types.includes(task)) {
        log.warn({ source: name, task }, 'source fans out to a task with no handler in this process; its jobs wait for a worker that has one');
      }
    }
  }
  for (const [name, schedule] of Object.entries(config?.schedules ?? {})) {
    if (!types.includes(schedule.task)) {
      log.warn({ schedule: name, task: schedule.task }, 'schedule enqueues a task with no handler in this process; its jobs wait for a worker that has one');
    }
  }
}

/**
 * `--queues emial`: a worker on a queue none of its tasks enqueues to and no job in the
 * store is on claims nothing, ever. Said at start; a queue that only later gets jobs
 * (another app's) is why this warns rather than refuses.
 */
export function warnAboutUnknownQueues(queues: readonly string[] | null, taskQueues: readonly string[], storeQueues: readonly string[], log: Logger): void {
  const known = new Set([...taskQueues, ...storeQueues]);
  for (const queue of queues ?? []) {
    if (!known.has(queue)) log.warn({ queue, knownQueues: [...known].sort() }, 'worker claims from a queue that no task of this process uses and no job in the store is on; a typo?');
  }
}

/** The same for a running process: its tasks' queues and the store's. A store that cannot answer now does not stop a start. */
export async function warnAboutUnknownQueuesOf(mr: Mailroom, queues: readonly string[] | null, log: Logger): Promise<void> {
  if (queues === null) return;
  const stats = await mr.stats().catch(() => null);
  if (stats) warnAboutUnknownQueues(queues, mr.taskQueues(), Object.keys(stats.byQueue), log);
}
