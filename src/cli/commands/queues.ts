// `mailroom queues`: every queue with jobs or a pause, its counts, the age of its oldest
// due pending job, and whether it is paused (and why, since when).

import { parseCommandArgs } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { formatTime, queueCountColumns, renderTable, writeJson, writeLines } from '../output.js';
import { emptyStatusCounts } from '../../core/types.js';
import type { PausedQueue, StatusCounts } from '../../core/types.js';

export interface QueuesOptions {
  readonly common: CommonOptions;
}

interface QueueRow {
  readonly queue: string;
  readonly counts: StatusCounts;
  readonly oldestPendingAgeMs: number | null;
  readonly paused: PausedQueue | null;
}

const queues: CliCommand<QueuesOptions> = {
  name: 'queues',
  summary: 'Queues with their counts and which are paused',
  usage: `Usage: mailroom queues [--json]

Every queue that holds jobs or is paused: its counts by status, how long its oldest due
pending job has waited, and for a paused queue since when and why (mailroom queue resume
NAME lets its jobs run again).

Options:
  --db URL, --config PATH
  --json          print [{ queue, counts, oldestPendingAgeMs, paused: { reason, pausedAt } | null }]`,

  parse(argv) {
    return { common: parseCommandArgs('queues', argv, {}).common };
  },

  async run(options, io) {
    return withCliMailroom(options.common, io, { migrate: false }, async ({ mr }) => {
      const stats = await mr.stats();
      const pausedByName = new Map(stats.paused.map((p) => [p.queue, p]));
      const names = [...new Set([...Object.keys(stats.byQueue), ...pausedByName.keys()])].sort();
      const rows: QueueRow[] = names.map((queue) => ({
        queue,
        counts: stats.byQueue[queue] ?? emptyStatusCounts(),
        oldestPendingAgeMs: stats.oldestPendingAgeMsByQueue[queue] ?? null,
        paused: pausedByName.get(queue) ?? null,
      }));
      if (options.common.json) {
        writeJson(
          io.stdout,
          rows.map((r) => ({ ...r, paused: r.paused && { reason: r.paused.reason, pausedAt: r.paused.pausedAt.toISOString() } })),
        );
        return 0;
      }
      if (rows.length === 0) {
        writeLines(io.stdout, 'No queues yet: a queue appears with its first job.');
        return 0;
      }
      writeLines(
        io.stdout,
        renderTable<QueueRow>(
          [
            ...queueCountColumns<QueueRow>((r) => r.queue, (r) => r.counts, (r) => r.oldestPendingAgeMs),
            { header: 'PAUSED', value: (r) => (r.paused ? `since ${formatTime(r.paused.pausedAt)}${r.paused.reason ? `: ${r.paused.reason}` : ''}` : '-'), maxWidth: 80 },
          ],
          rows,
        ),
      );
      return 0;
    });
  },
};

export default queues;
