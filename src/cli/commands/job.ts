// `mailroom job ID`: one job in full: its fields, payload, every attempt (outcome, error,
// worker) and every replay (when, why, by whom). The answer to "why did this fail?".

import { CliUsageError, parseCommandArgs, parseJobId } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { formatDurationMs, formatTime, jobDetailToJson, renderTable, writeJson, writeLines } from '../output.js';
import { JobNotFoundError } from '../../core/errors.js';
import type { Attempt, JobDetail, Replay } from '../../core/types.js';

export interface JobOptions {
  readonly common: CommonOptions;
  readonly id: string;
}

const job: CliCommand<JobOptions> = {
  name: 'job',
  summary: 'Show one job with every attempt and replay',
  usage: `Usage: mailroom job ID [--json]

Shows a job's fields, payload, attempts (start, end, outcome, error, worker), the stack
of the latest failure, and replays.

Options:
  --db URL, --config PATH
  --json          print the job with "attemptsLog" (each failure's "stack") and "replays"`,

  parse(argv) {
    const { positionals, common } = parseCommandArgs('job', argv, {}, { maxPositionals: 1 });
    if (positionals[0] === undefined) throw new CliUsageError('Give a job id: mailroom job ID (ids are in `mailroom jobs`).');
    return { common, id: parseJobId(positionals[0], 'job') };
  },

  async run(options, io) {
    return withCliMailroom(options.common, io, { migrate: false }, async ({ mr }) => {
      const detail = await mr.getJob(options.id);
      if (!detail) throw new JobNotFoundError(options.id);
      if (options.common.json) writeJson(io.stdout, jobDetailToJson(detail));
      else writeLines(io.stdout, renderJobDetail(detail));
      return 0;
    });
  },
};

/** The human view of one job. */
export function renderJobDetail(detail: JobDetail): string {
  const fields: Array<[string, string]> = [
    ['id', detail.id],
    ['type', detail.type],
    ['queue', detail.queue],
    ['status', detail.status + (detail.deadReason ? ` (${detail.deadReason})` : '')],
    ['attempts', `${detail.attempts} of ${detail.maxAttempts}`],
    ['priority', String(detail.priority)],
    ['key', detail.key ?? '-'],
    ['group', detail.group ?? '-'],
    ['source', detail.source ? `${detail.source} (event ${detail.eventId})` : '-'],
    ['created', formatTime(detail.createdAt)],
    ['run at', formatTime(detail.runAt)],
    ['started', formatTime(detail.startedAt)],
    ['finished', formatTime(detail.finishedAt)],
    ['lease', detail.leaseOwner ? `${detail.leaseOwner} until ${formatTime(detail.leaseExpiresAt)}` : '-'],
    ['last error', detail.lastError ?? '-'],
  ];
  const width = Math.max(...fields.map(([name]) => name.length));
  const lines = fields.map(([name, value]) => `${name.padEnd(width)}  ${value}`);
  lines.push('', 'payload:', indent(JSON.stringify(detail.payload, null, 2)));
  lines.push('', `attempts (${detail.attemptsLog.length}):`);
  lines.push(
    detail.attemptsLog.length === 0
      ? '  (none yet)'
      : indent(
          renderTable<Attempt>(
            [
              { header: '#', value: (a) => String(a.attempt), align: 'right' },
              { header: 'OUTCOME', value: (a) => a.outcome },
              { header: 'STARTED', value: (a) => formatTime(a.startedAt) },
              {
                header: 'TOOK',
                value: (a) => (a.startedAt && a.finishedAt ? formatDurationMs(a.finishedAt.getTime() - a.startedAt.getTime()) : '-'),
                align: 'right',
              },
              { header: 'WORKER', value: (a) => a.workerId ?? '-', maxWidth: 32 },
              { header: 'ERROR', value: (a) => a.error ?? '-', maxWidth: 100 },
            ],
            detail.attemptsLog,
          ),
        ),
  );
  // The newest failure's stack: older ones are usually the same throw (all of them: --json).
  const failure = detail.attemptsLog.findLast((attempt) => attempt.stack !== null);
  if (failure) lines.push('', `stack of attempt ${failure.attempt} (${failure.outcome}):`, indent(failure.stack!));
  if (detail.replays.length > 0) {
    lines.push('', `replays (${detail.replays.length}):`);
    lines.push(
      indent(
        renderTable<Replay>(
          [
            { header: 'AT', value: (r) => formatTime(r.at) },
            { header: 'BY', value: (r) => r.by ?? '-' },
            { header: 'REASON', value: (r) => r.reason ?? '-', maxWidth: 100 },
          ],
          detail.replays,
        ),
      ),
    );
  }
  return lines.join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

export default job;
