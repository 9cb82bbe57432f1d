// `mailroom stats`: counts by status and queue, the oldest due pending job's age per queue,
// and the store's durability setting. Cheap at any table size (counters, not COUNT(*)).

import { parseCommandArgs } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { queueCountColumns, renderTable, writeJson, writeLines } from '../output.js';
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
  --json          print { byStatus, byQueue, oldestPendingAgeMs, oldestPendingAgeMsByQueue, paused, durability }`,

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
          paused: result.paused.map((p) => ({ queue: p.queue, reason: p.reason, pausedAt: p.pausedAt.toISOString() })),
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
          queueCountColumns<Row>((r) => r.queue, (r) => r.counts, (r) => r.ageMs),
          rows,
        ),
      );
      if (result.paused.length > 0) writeLines(io.stdout, '', `paused: ${result.paused.map((p) => p.queue).join(', ')} (mailroom queues says why)`);
      const durability = Object.entries(result.durability).map(([k, v]) => `${k}=${v}`).join(', ');
      if (durability) writeLines(io.stdout, '', `durability: ${durability}`);
      return 0;
    });
  },
};

export default stats;
