// `mailroom cancel --id N`: a pending job becomes dead with reason "cancelled" (it keeps its
// payload and can still be replayed). Running, done and dead jobs are refused.

import { CliUsageError, parseCommandArgs, parseJobId } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { jobToJson, writeJson, writeLines } from '../output.js';

export interface CancelOptions {
  readonly common: CommonOptions;
  readonly id: string;
  readonly reason?: string;
}

const cancel: CliCommand<CancelOptions> = {
  name: 'cancel',
  summary: 'Cancel a pending job',
  usage: `Usage: mailroom cancel --id N [--reason R] [--json]

Moves a pending job to dead with reason "cancelled". It keeps its payload and history;
replay it later with mailroom replay --id N.

Options:
  --id N          the job (also accepted as the only argument)
  --reason R      recorded as the job's last error
  --db URL, --config PATH
  --json          print the cancelled job`,

  parse(argv) {
    const { values, positionals, common } = parseCommandArgs('cancel', argv, { id: { type: 'string' }, reason: { type: 'string' } }, { maxPositionals: 1 });
    if (values.id !== undefined && positionals[0] !== undefined) throw new CliUsageError('Give the id once: mailroom cancel --id N.');
    const raw = values.id ?? positionals[0];
    if (raw === undefined) throw new CliUsageError('Give the job to cancel: mailroom cancel --id N.');
    return { common, id: parseJobId(raw, '--id'), reason: values.reason };
  },

  async run(options, io) {
    return withCliMailroom(options.common, io, { migrate: false }, async ({ mr }) => {
      const job = await mr.cancel(options.id, { reason: options.reason });
      if (options.common.json) writeJson(io.stdout, jobToJson(job));
      else {
        const why = options.reason ? `: ${options.reason}` : '';
        writeLines(io.stdout, `Cancelled job ${job.id} (${job.type})${why}. It is dead (cancelled); mailroom replay --id ${job.id} puts it back.`);
      }
      return 0;
    });
  },
};

export default cancel;
