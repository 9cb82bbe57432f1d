// `mailroom batch ID`: one batch's progress (terminal / total, done, dead), its completion
// job (id and status, once the last child ended), and the first of its dead children with
// their errors: the answer to "is the report through, and if not, what is stuck?".

import { CliUsageError, parseCommandArgs, parseJobId } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { formatTime, indent, jobToJson, renderJobTable, writeJson, writeLines, renderFields } from '../output.js';
import type { Batch, Job } from '../../core/types.js';
import { noBatchMessage } from '../named-ids.js';

export interface BatchOptions {
  readonly common: CommonOptions;
  readonly id: string;
}

/** Dead children shown: enough to see what failed; `mailroom jobs --batch ID --status dead` lists the rest. */
const MAX_DEAD_SHOWN = 10;

const batch: CliCommand<BatchOptions> = {
  name: 'batch',
  summary: 'Show a batch’s progress and its completion job',
  usage: `Usage: mailroom batch ID [--json]

Shows a batch (mr.enqueueBatch): how many of its children have ended (done or dead) out
of how many, its completion job (enqueued once, when the last child ends) with its
status, and its first ${MAX_DEAD_SHOWN} dead children with their errors (all of them:
mailroom jobs --batch ID --status dead). A batch id is on each child (mailroom job CHILD_ID).

Options:
  --db URL, --config PATH
  --json          print { id, total, terminal, done, dead, thenType, completionJobId,
                  completionStatus, createdAt, deadChildren }`,

  parse(argv) {
    const { positionals, common } = parseCommandArgs('batch', argv, {}, { maxPositionals: 1 });
    if (positionals[0] === undefined) throw new CliUsageError('Give a batch id: mailroom batch ID (a child job shows its batch in `mailroom job ID`).');
    return { common, id: parseJobId(positionals[0], 'batch', 'batch') };
  },

  async run(options, io) {
    return withCliMailroom(options.common, io, { migrate: false }, async ({ mr }) => {
      const found = await mr.getBatch(options.id);
      if (!found) throw new Error(noBatchMessage(options.id));
      const deadChildren = found.dead > 0 ? await mr.listJobs({ batchId: found.id, status: 'dead', limit: MAX_DEAD_SHOWN }) : [];
      if (options.common.json) {
        writeJson(io.stdout, { ...batchToJson(found), deadChildren: deadChildren.map(jobToJson) });
      } else {
        writeLines(io.stdout, renderBatch(found, deadChildren));
      }
      return 0;
    });
  },
};

function batchToJson(found: Batch): Record<string, unknown> {
  return {
    id: found.id,
    total: found.total,
    terminal: found.done + found.dead,
    done: found.done,
    dead: found.dead,
    thenType: found.thenType,
    completionJobId: found.completionJobId,
    completionStatus: found.completionStatus,
    createdAt: found.createdAt.toISOString(),
  };
}

function renderBatch(found: Batch, deadChildren: readonly Job[]): string {
  const terminal = found.done + found.dead;
  const percent = found.total === 0 ? 100 : Math.floor((terminal / found.total) * 100);
  const completion =
    found.completionJobId === null
      ? `${found.thenType}, enqueued when the last child ends`
      : `${found.thenType}, job ${found.completionJobId} (${found.completionStatus ?? 'purged'})`;
  const fields: Array<[string, string]> = [
    ['id', found.id],
    ['progress', `${terminal} / ${found.total} ended (${percent}%)`],
    ['done', String(found.done)],
    ['dead', String(found.dead)],
    ['completion', completion],
    ['created', formatTime(found.createdAt)],
  ];
  const lines = renderFields(fields);
  if (deadChildren.length > 0) {
    const more = found.dead > deadChildren.length ? ` (first ${deadChildren.length} of ${found.dead})` : '';
    lines.push('', `dead children${more}:`, indent(renderJobTable(deadChildren)));
  }
  return lines.join('\n');
}

export default batch;
