// `mailroom job ID`: one job in full: its fields, payload, every attempt (outcome, error,
// worker) and every replay (when, why, by whom). The answer to "why did this fail?".

import { CliUsageError, parseCommandArgs, parseJobId } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { boundedBlock, eventToJson, formatDurationMs, formatTime, indent, jobDetailToJson, renderBody, renderTable, writeJson, writeLines, renderFields, firstLines } from '../output.js';
import { JobNotFoundError } from '../../core/errors.js';
import type { Attempt, InboundEvent, JobDetail, Replay } from '../../core/types.js';

/** Lines of the last error shown in the field list; the newest failure's stack follows whole. */
const LAST_ERROR_LINES = 4;

export interface JobOptions {
  readonly common: CommonOptions;
  readonly id: string;
}

const job: CliCommand<JobOptions> = {
  name: 'job',
  summary: 'Show one job with every attempt and replay',
  usage: `Usage: mailroom job ID [--json]

Shows a job's fields, its payload (for a job from a webhook: the event's body, which
its handler gets), its result (what the handler returned), attempts (start, end,
outcome, error, worker, details), the stack of the latest failure, and replays.

Options:
  --db URL, --config PATH
  --json          print the job with "result", "attemptsLog" (each failure's "stack", each
                  attempt's "details"), "replays" and
                  "event" (the webhook it came from, with its body; null for other jobs)`,

  parse(argv) {
    const { positionals, common } = parseCommandArgs('job', argv, {}, { maxPositionals: 1 });
    if (positionals[0] === undefined) throw new CliUsageError('Give a job id: mailroom job ID (ids are in `mailroom jobs`).');
    return { common, id: parseJobId(positionals[0], 'job') };
  },

  async run(options, io) {
    return withCliMailroom(options.common, io, { migrate: false }, async ({ mr }) => {
      const detail = await mr.getJob(options.id);
      if (!detail) throw new JobNotFoundError(options.id);
      // A job fanned out from a webhook stores no payload: its handler gets the event's body.
      const event = detail.eventId === null ? null : await mr.getEvent(detail.eventId);
      if (options.common.json) writeJson(io.stdout, { ...jobDetailToJson(detail), event: event ? eventToJson(event) : null });
      else writeLines(io.stdout, renderJobDetail(detail, event));
      return 0;
    });
  },
};

/** The human view of one job. */
export function renderJobDetail(detail: JobDetail, event: InboundEvent | null = null): string {
  const fields: Array<[string, string]> = [
    ['id', detail.id],
    ['type', detail.type],
    ['queue', detail.queue],
    ['status', detail.status + (detail.deadReason ? ` (${deadReasonText(detail)})` : '')],
    ['attempts', `${detail.attempts} of ${detail.maxAttempts}` + (detail.snoozes > 0 ? `, snoozed ${detail.snoozes === 1 ? 'once' : `${detail.snoozes} times`}` : '')],
    ['priority', String(detail.priority)],
    ['key', detail.key ?? '-'],
    ['group', detail.group ?? '-'],
    ['source', detail.source ? `${detail.source} (event ${detail.eventId})` : '-'],
    ...(detail.batchId !== null ? ([['batch', `${detail.batchId} (mailroom batch ${detail.batchId})`]] as Array<[string, string]>) : []),
    ...(detail.completesBatchId !== null ? ([['completes', `batch ${detail.completesBatchId}`]] as Array<[string, string]>) : []),
    ['created', formatTime(detail.createdAt)],
    ['run at', formatTime(detail.runAt)],
    ['started', formatTime(detail.startedAt)],
    ['finished', formatTime(detail.finishedAt)],
    // Only a running job holds a lease; a done row keeps the worker that ran it (attempts show it).
    ['lease', detail.status === 'running' && detail.leaseOwner ? `${detail.leaseOwner} until ${formatTime(detail.leaseExpiresAt)}` : '-'],
    // A forward's error carries the receiver's answer: a whole HTML page would push the rest away.
    ['last error', detail.lastError === null ? '-' : firstLines(detail.lastError, LAST_ERROR_LINES, 'all of it: --json')],
    ...(detail.progress ? ([['progress', `${Math.round(detail.progress.fraction * 100)}%${detail.progress.note ? ` ${detail.progress.note}` : ''}`]] as Array<[string, string]>) : []),
  ];
  const lines = renderFields(fields);
  if (event) lines.push('', `payload: the body of event ${event.id} (${[event.source, event.type].filter(Boolean).join(' ')}):`, boundedBlock(renderBody(event.rawBody)));
  else if (detail.eventId !== null) lines.push('', `payload: the body of event ${detail.eventId}, which is no longer stored`);
  else lines.push('', 'payload:', boundedBlock(JSON.stringify(detail.payload, null, 2)));
  if (detail.result !== null) lines.push('', 'result:', indent(JSON.stringify(detail.result, null, 2)));
  lines.push('', `attempts (${detail.attemptsLog.length}):`, ...renderAttempts(detail));
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

/** The attempt table, one row per attempt, with a line where each replay fell. */
function renderAttempts(detail: JobDetail): string[] {
  if (detail.attemptsLog.length === 0) return withReplayMarks(['  (none yet)'], detail, 0);
  const table = renderTable<Attempt>(
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
      // Details are small JSON (ctx.setDetails); whole in --json.
      ...(detail.attemptsLog.some((a) => a.details !== null)
        ? [{ header: 'DETAILS', value: (a: Attempt) => (a.details === null ? '-' : JSON.stringify(a.details)), maxWidth: 80 }]
        : []),
    ],
    detail.attemptsLog,
  );
  return withReplayMarks(indent(table).split('\n'), detail, 1);
}

/**
 * The attempt rows with a line where each replay fell: attempt numbers start again after
 * a replay, and without the mark `1 2 3 1` reads like a bug. `headerLines` rows come
 * before the first attempt. A replay recorded without its position is placed by time.
 */
function withReplayMarks(rows: string[], detail: JobDetail, headerLines: number): string[] {
  const placed = detail.replays.map((replay) => ({
    replay,
    before: replay.attemptsBefore ?? detail.attemptsLog.filter((a) => a.finishedAt !== null && a.finishedAt <= replay.at).length,
  }));
  const out = rows.slice(0, headerLines);
  for (let i = 0; i <= detail.attemptsLog.length; i++) {
    for (const { replay } of placed.filter((p) => p.before === i)) {
      out.push(`  -- replayed ${formatTime(replay.at)} by ${replay.by ?? '-'}${replay.reason ? `: ${replay.reason}` : ''}; attempts count from 1 again --`);
    }
    if (i < detail.attemptsLog.length) out.push(rows[headerLines + i]!);
  }
  return out;
}

/** Why a dead job is dead; a cancellation with the reason it was given. */
function deadReasonText(detail: JobDetail): string {
  const prefix = 'cancelled: ';
  if (detail.deadReason === 'cancelled' && detail.lastError?.startsWith(prefix)) return `cancelled: ${detail.lastError.slice(prefix.length)}`;
  return detail.deadReason ?? '';
}

export default job;
