// `mailroom stats`: counts by status and queue, the oldest due pending job's age per queue,
// and the store's durability setting. Cheap at any table size (counters, not COUNT(*)).

import { parseCommandArgs } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { formatDurationMs, renderTable, writeJson, writeLines } from '../output.js';
import { JOB_STATUSES } from '../../core/types.js';
import type { StatusCounts } from '../../core/types.js';

export interface StatsOptions {
  readonly common: CommonOptions;
}

const stats: CliCommand<StatsOptions> = {
  name: 'stats',
  summary: 'Counts by status and queue, oldest pending age',
  usage: `Usage: mailroom stats [--json]

Counts of jobs by status, overall and per queue, and how long the oldest due pending job
of each queue has waited (a growing age means workers are missing or stuck).

Options:
  --db URL, --config PATH
  --json          print { byStatus, byQueue, oldestPendingAgeMs, oldestPendingAgeMsByQueue, durability }`,

  parse(argv) {
    return { common: parseCommandArgs('stats', argv, {}).common };
  },

  async run(options, io) {
    return withCliMailroom(options.common, io, { migrate: false }, async ({ mr }) => {
      const result = await mr.stats();
      if (options.common.json) {
        writeJson(io.stdout, {
          byStatus: result.byStatus,
          byQueue: result.byQueue,
          oldestPendingAgeMs: result.oldestPendingAgeMs,
          oldestPendingAgeMsByQueue: result.oldestPendingAgeMsByQueue,
          durability: result.durability,
        });
        return 0;
      }
      type Row = { queue: string; counts: StatusCounts; ageMs: number | undefined };
      const rows: Row[] = Object.keys(result.byQueue)
        .sort()
        .map((queue) => ({ queue, counts: result.byQueue[queue]!, ageMs: result.oldestPendingAgeMsByQueue[queue] }));
      rows.push({ queue: 'ALL', counts: result.byStatus, ageMs: rows.some((r) => r.ageMs !== undefined) ? result.oldestPendingAgeMs : undefined });
      writeLines(
        io.stdout,
        renderTable<Row>(
          [
            { header: 'QUEUE', value: (r) => r.queue, maxWidth: 30 },
            ...JOB_STATUSES.map((status) => ({ header: status.toUpperCase(), value: (r: Row) => String(r.counts[status]), align: 'right' as const })),
            { header: 'OLDEST_PENDING', value: (r) => (r.ageMs === undefined ? '-' : formatDurationMs(r.ageMs)), align: 'right' },
          ],
          rows,
        ),
      );
      const durability = Object.entries(result.durability).map(([k, v]) => `${k}=${v}`).join(', ');
      if (durability) writeLines(io.stdout, '', `durability: ${durability}`);
      return 0;
    });
  },
};

export default stats;
