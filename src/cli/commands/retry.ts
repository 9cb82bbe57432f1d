// `mailroom retry`: run now. Pending jobs that wait for their next retry (or a delay)
// become due at once, attempts untouched, group order kept: what an operator does when
// the endpoint they kept failing against is back. Dead jobs need `mailroom replay`.

import { CliUsageError, parseCommandArgs, parseJobId } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { writeJson, writeLines } from '../output.js';
import { JobStateError } from '../../core/errors.js';
import type { RetryNowFilter } from '../../mailroom.js';
import { assertNamedIdsExist } from '../named-ids.js';

export interface RetryCliOptions {
  readonly common: CommonOptions;
  readonly target: string | RetryNowFilter;
}

const retry: CliCommand<RetryCliOptions> = {
  name: 'retry',
  summary: 'Run waiting pending jobs now (attempts untouched)',
  usage: `Usage: mailroom retry (--id N | --type T | --queue Q | --error TEXT | --source S | --event ID)
                      [--include-delayed] [--json]

Makes pending jobs that wait for their next retry due now. Their attempts and history
stay as they are; jobs of one group still run one at a time, in order. Filters combine:
--type fulfil_order --error ECONNREFUSED runs every fulfil_order job (--type is the task's
name) waiting after a refused connection. A filter leaves out jobs that only wait for
their delay or a snooze (no last error), so this does not also run now what is
scheduled for later;
--include-delayed takes them too, and --id takes one job either way. Dead jobs are not
touched: put those back with mailroom replay.

Options:
  --id N              one job
  --type T            waiting jobs of this type
  --queue Q           waiting jobs on this queue
  --error TEXT        waiting jobs whose last error contains TEXT (case-insensitive)
  --source S          waiting jobs from this webhook source
  --event ID          the waiting jobs of one stored event
  --include-delayed   a filter also takes jobs waiting only for their delay
  --db URL, --config PATH
  --json              print { "count": N, "ids": [...] }`,

  parse(argv) {
    const { values, common } = parseCommandArgs('retry', argv, {
      id: { type: 'string' },
      type: { type: 'string' },
      queue: { type: 'string' },
      error: { type: 'string' },
      source: { type: 'string' },
      event: { type: 'string' },
      'include-delayed': { type: 'boolean' },
    });
    const isFiltered = [values.type, values.queue, values.error, values.source, values.event].some((value) => value !== undefined);
    if (values.id !== undefined) {
      if (isFiltered || values['include-delayed']) throw new CliUsageError('--id runs one job; do not combine it with filters or --include-delayed.');
      return { common, target: parseJobId(values.id, '--id') };
    }
    if (!isFiltered) throw new CliUsageError('Say what to run now: --id N, or a filter (--type, --queue, --error, --source, --event). See `mailroom retry --help`.');
    return {
      common,
      target: {
        type: values.type,
        queue: values.queue,
        errorContains: values.error,
        source: values.source,
        eventId: values.event === undefined ? undefined : parseJobId(values.event, '--event', 'event'),
        includeDelayed: values['include-delayed'] === true,
      },
    };
  },

  async run(options, io) {
    return withCliMailroom(options.common, io, { migrate: false }, async ({ mr }) => {
      const result = await mr.retryNow(options.target).catch((error: unknown) => {
        throw withCliAdvice(error);
      });
      if (result.count === 0 && typeof options.target !== 'string') await assertNamedIdsExist(mr, options.target);
      if (options.common.json) {
        writeJson(io.stdout, { count: result.count, ids: result.ids });
      } else if (typeof options.target === 'string') {
        writeLines(
          io.stdout,
          result.count === 1
            ? `Job ${options.target} is due now; a worker runs it when one is free (after earlier jobs of its group).`
            : `Job ${options.target} was already due; nothing to do.`,
        );
      } else if (result.count === 0) {
        const delayedToo = options.target.includeDelayed ? '' : ' Jobs only delayed are left out (--include-delayed takes them);';
        writeLines(io.stdout, `No pending jobs waiting for a retry matched; nothing to do.${delayedToo} dead jobs: mailroom dead, then mailroom replay.`);
      } else {
        const shown = result.ids.length > 20 ? `${result.ids.slice(0, 20).join(', ')}, …` : result.ids.join(', ');
        writeLines(io.stdout, `Made ${result.count} job${result.count === 1 ? '' : 's'} due now: ${shown}.`);
      }
      return 0;
    });
  },
};

/** A dead or done job is replayed, not run now: say which command does that. */
function withCliAdvice(error: unknown): unknown {
  if (!(error instanceof JobStateError) || (error.status !== 'dead' && error.status !== 'done')) return error;
  const force = error.status === 'done' ? ' --force' : '';
  return new JobStateError(error.jobId, error.status, error.operation, `To run it again: mailroom replay --id ${error.jobId}${force}.`);
}

export default retry;
