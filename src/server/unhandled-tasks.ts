// Jobs for a task no process handles wait forever, quietly: a source that fans out to a
// misspelt task, a schedule naming one. A process that runs workers says so at start for
// each one its own registry lacks (another process may have the handler, so a warning,
// not a refusal).

import type { MailroomConfig } from '../config/define-config.js';
import type { Logger } from '../log.js';

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
