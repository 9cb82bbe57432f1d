// `mailroom jobs`: list jobs by status, type, queue, source or error text. The first thing
// to run when something is stuck: `mailroom jobs --status pending --limit 20`.

import { CliUsageError, parseCommandArgs, parseInteger, parseJobId } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand, CliIo } from '../command.js';
import { jobToJson, renderJobTable, writeJson, writeLines } from '../output.js';
import { JOB_STATUSES } from '../../core/types.js';
import type { JobStatus } from '../../core/types.js';
import type { ListJobsOptions } from '../../mailroom.js';
import { assertNamedIdsExist } from '../named-ids.js';

export interface JobsOptions {
  readonly common: CommonOptions;
  readonly filter: ListJobsOptions;
}

/** 50: a screenful; --limit raises it (up to 10,000 per call, then page with --after). */
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 10_000;

/** The filter options `jobs` and `dead` share. */
export const LIST_FILTER_OPTIONS = {
  type: { type: 'string' },
  queue: { type: 'string' },
  source: { type: 'string' },
  event: { type: 'string' },
  batch: { type: 'string' },
  error: { type: 'string' },
  limit: { type: 'string' },
  after: { type: 'string' },
  newest: { type: 'boolean' },
} as const;

export const LIST_FILTER_USAGE = `  --type T             only jobs of this type
  --queue Q            only jobs on this queue
  --source S           only jobs fanned out from events of this webhook source
  --event ID           only jobs of this stored event
  --batch ID           only the children of this batch (mailroom batch ID)
  --error TEXT         only jobs whose last error contains TEXT (case-insensitive)
  --limit N            at most N jobs (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT})
  --after ID           jobs after this id (the next page)
  --newest             newest first
  --db URL, --config PATH
  --json               print { "jobs": [...] }`;

export function parseListFilter(values: Record<string, string | boolean | undefined>, status: JobStatus | undefined): ListJobsOptions {
  return {
    status,
    type: values.type as string | undefined,
    queue: values.queue as string | undefined,
    source: values.source as string | undefined,
    eventId: values.event === undefined ? undefined : parseJobId(values.event as string, '--event', 'event'),
    batchId: values.batch === undefined ? undefined : parseJobId(values.batch as string, '--batch', 'batch'),
    errorContains: values.error as string | undefined,
    limit: values.limit === undefined ? DEFAULT_LIMIT : parseInteger(values.limit as string, '--limit', { min: 1, max: MAX_LIMIT }),
    after: values.after === undefined ? undefined : parseJobId(values.after as string, '--after'),
    descending: values.newest === true,
  };
}

export async function runList(options: JobsOptions, io: CliIo): Promise<number> {
  return withCliMailroom(options.common, io, { migrate: false }, async ({ mr }) => {
    const jobs = await mr.listJobs(options.filter);
    if (jobs.length === 0) await assertNamedIdsExist(mr, options.filter);
    const limit = options.filter.limit ?? DEFAULT_LIMIT;
    // A full page may have more after it: the --after of the next (null: this was the last).
    const nextAfter = jobs.length === limit ? jobs[jobs.length - 1]!.id : null;
    if (options.common.json) {
      writeJson(io.stdout, { jobs: jobs.map(jobToJson), nextAfter });
    } else {
      writeLines(io.stdout, renderJobTable(jobs));
      if (nextAfter !== null) writeLines(io.stdout, `(first ${limit}; next page: --after ${nextAfter})`);
    }
    return 0;
  });
}

const jobsCommand: CliCommand<JobsOptions> = {
  name: 'jobs',
  summary: 'List jobs, filtered by status, type, source or error text',
  usage: `Usage: mailroom jobs [--status S] [--type T] [--queue Q] [--source S] [--event ID] [--batch ID] [--error TEXT]
                    [--limit N] [--after ID] [--newest] [--json]

Lists jobs in id order (enqueue order). Examples:
  mailroom jobs --status pending --limit 20        what is waiting
  mailroom jobs --status dead --error timeout      what died, and of what
  mailroom jobs --source stripe --newest           recent jobs from Stripe webhooks

Options:
  --status S           pending | running | done | dead
${LIST_FILTER_USAGE}`,

  parse(argv) {
    const { values, common } = parseCommandArgs('jobs', argv, { ...LIST_FILTER_OPTIONS, status: { type: 'string' } });
    const status = values.status;
    if (status !== undefined && !JOB_STATUSES.includes(status as JobStatus)) {
      throw new CliUsageError(`--status must be one of ${JOB_STATUSES.join(', ')}, not "${status}".`);
    }
    return { common, filter: parseListFilter(values, status as JobStatus | undefined) };
  },

  run: runList,
};

export default jobsCommand;
