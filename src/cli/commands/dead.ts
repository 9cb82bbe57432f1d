// `mailroom dead`: the dead-letter list with each job's last error; the same filters as
// `jobs`. Replay what it shows with `mailroom replay`.

import { parseCommandArgs } from '../args.js';
import type { CliCommand } from '../command.js';
import { LIST_FILTER_OPTIONS, LIST_FILTER_USAGE, parseListFilter, runList } from './jobs.js';
import type { JobsOptions } from './jobs.js';

const dead: CliCommand<JobsOptions> = {
  name: 'dead',
  summary: 'List dead jobs with their errors',
  usage: `Usage: mailroom dead [--type T] [--error TEXT] [--limit N] [--json]

Lists dead jobs (attempts used up, Permanent, or cancelled) with their last error.
Every attempt of one job: mailroom job ID. Put them back: mailroom replay --all-dead.

Options:
${LIST_FILTER_USAGE}`,

  parse(argv) {
    const { values, common } = parseCommandArgs('dead', argv, LIST_FILTER_OPTIONS);
    return { common, filter: parseListFilter(values, 'dead') };
  },

  run: runList,
};

export default dead;
