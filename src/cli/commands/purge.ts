// `mailroom purge --older-than 7d`: delete done jobs finished before the window, with their
// history, and stored events (dedupe receipts) no remaining job references. Dead, pending
// and running jobs are kept unless --dead-older-than is given for dead ones.

import { parseCommandArgs, parseDurationMs } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { formatDurationMs, writeJson, writeLines } from '../output.js';
import { DEFAULT_DONE_RETENTION_MS } from '../../maintenance/retention.js';

export interface PurgeCliOptions {
  readonly common: CommonOptions;
  readonly olderThanMs: number;
  readonly deadOlderThanMs?: number;
}

const purge: CliCommand<PurgeCliOptions> = {
  name: 'purge',
  summary: 'Delete done jobs (and unreferenced events) past a retention window',
  usage: `Usage: mailroom purge [--older-than 7d] [--dead-older-than 90d] [--json]

Deletes done jobs that finished longer ago than --older-than (default 7d), their attempt
history, and stored events older than that which no remaining job references (so a
provider redelivery inside the window is still recognised as a duplicate).
Dead, pending and running jobs are never deleted, except dead ones past
--dead-older-than when you give it.

Options:
  --older-than DURATION        done jobs finished before this (30s, 5m, 2h, 7d)
  --dead-older-than DURATION   also dead jobs finished before this
  --db URL, --config PATH
  --json                       print { "jobs": N, "events": N }`,

  parse(argv) {
    const { values, common } = parseCommandArgs('purge', argv, { 'older-than': { type: 'string' }, 'dead-older-than': { type: 'string' } });
    return {
      common,
      olderThanMs: values['older-than'] === undefined ? DEFAULT_DONE_RETENTION_MS : parseDurationMs(values['older-than'], '--older-than'),
      deadOlderThanMs: values['dead-older-than'] === undefined ? undefined : parseDurationMs(values['dead-older-than'], '--dead-older-than'),
    };
  },

  async run(options, io) {
    return withCliMailroom(options.common, io, { migrate: false }, async ({ mr }) => {
      const result = await mr.purge({ olderThanMs: options.olderThanMs, deadOlderThanMs: options.deadOlderThanMs });
      if (options.common.json) {
        writeJson(io.stdout, { jobs: result.jobs, events: result.events });
      } else {
        const dead = options.deadOlderThanMs === undefined ? '' : ` (and dead ones older than ${formatDurationMs(options.deadOlderThanMs)})`;
        writeLines(io.stdout, `Purged ${result.jobs} job${result.jobs === 1 ? '' : 's'} done more than ${formatDurationMs(options.olderThanMs)} ago${dead}, and ${result.events} event${result.events === 1 ? '' : 's'}.`);
      }
      return 0;
    });
  },
};

export default purge;
