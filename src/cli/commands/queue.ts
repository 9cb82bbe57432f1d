// `mailroom queue pause|resume NAME`: stop every worker anywhere from claiming a queue's
// jobs (running ones finish; enqueue and webhooks keep being accepted), and start again.

import { CliUsageError, parseCommandArgs } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import type { Mailroom } from '../../mailroom.js';
import { writeJson, writeLines } from '../output.js';

export interface QueueOptions {
  readonly common: CommonOptions;
  readonly action: 'pause' | 'resume';
  readonly queue: string;
  readonly reason?: string;
}

const queue: CliCommand<QueueOptions> = {
  name: 'queue',
  summary: 'Pause or resume a queue',
  usage: `Usage: mailroom queue pause NAME [--reason R] [--json]
       mailroom queue resume NAME [--json]

pause: no worker, in any process, claims the queue's jobs until it is resumed. Jobs
already running finish; enqueue and webhooks keep being accepted, so the queue fills up.
Pausing a paused queue updates its reason. resume: its waiting jobs run again.
mailroom queues lists every queue and which are paused.

Options:
  --reason R      why (shown by mailroom queues, stats --json and the dashboard)
  --db URL, --config PATH
  --json          print { queue, paused, changed }`,

  parse(argv) {
    const { values, positionals, common } = parseCommandArgs('queue', argv, { reason: { type: 'string' } }, { maxPositionals: 2 });
    const [action, name] = positionals;
    if (action !== 'pause' && action !== 'resume') throw new CliUsageError('Say what to do: mailroom queue pause NAME, or mailroom queue resume NAME.');
    if (name === undefined || name === '') throw new CliUsageError(`Give the queue: mailroom queue ${action} NAME (mailroom queues lists them).`);
    if (action === 'resume' && values.reason !== undefined) throw new CliUsageError('--reason goes with pause, not resume.');
    return { common, action, queue: name, reason: values.reason };
  },

  async run(options, io) {
    return withCliMailroom(options.common, io, { migrate: false }, async ({ mr }) => {
      const isPause = options.action === 'pause';
      const changed = isPause ? await mr.pauseQueue(options.queue, { reason: options.reason }) : await mr.resumeQueue(options.queue);
      // A misspelt name pauses a queue nothing uses, and the real one keeps running: say so.
      if (isPause && changed && !(await isQueueInUse(mr, options.queue))) {
        writeLines(io.stderr, `Note: no job is in queue ${options.queue} and no worker recorded a task that uses it (mailroom queues lists the queues in use); it stays paused until resumed.`);
      }
      if (options.common.json) writeJson(io.stdout, { queue: options.queue, paused: isPause, changed });
      else if (isPause) writeLines(io.stdout, changed ? `Paused queue ${options.queue}: nothing claims its jobs until mailroom queue resume ${options.queue}.` : `Queue ${options.queue} was paused already${options.reason ? '; reason updated' : ''}.`);
      else writeLines(io.stdout, changed ? `Resumed queue ${options.queue}: its jobs run again.` : `Queue ${options.queue} was not paused.`);
      return 0;
    });
  },
};

/** A queue that holds jobs, or that a worker's task sends its jobs to (the task directory). */
async function isQueueInUse(mr: Mailroom, name: string): Promise<boolean> {
  if ((await mr.stats()).byQueue[name] !== undefined) return true;
  return (await mr.store.taskList()).some((task) => task.queue === name);
}

export default queue;
