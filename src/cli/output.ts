// How commands print: readable tables for people, stable JSON for scripts. Every command
// writes through these to its injected stream, never to process.stdout.
//
// JSON is a promise: field names and meanings do not change; new fields may be added.
// Times are ISO 8601 strings (UTC), ids are decimal strings, absent values are null.

import type { Writable } from 'node:stream';
import { JOB_STATUSES } from '../core/types.js';
import type { Attempt, EventSummary, InboundEvent, Job, JobDetail, Replay, StatusCounts } from '../core/types.js';
import { visibleHeaders } from '../providers/visible-headers.js';

import { bodyToJson, formatDurationMs, renderBody, terminalText } from '../core/display-text.js';

// Shared with the dashboard; the CLI's commands keep importing them from here.
export { bodyToJson, formatDurationMs, renderBody, visibleHeaders };

/** Writes one JSON document (pretty-printed, newline-terminated). */
export function writeJson(out: Writable, value: unknown): void {
  out.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Writes text lines, with any terminal controls in them written out (stored text comes from outside). */
export function writeLines(out: Writable, ...lines: string[]): void {
  out.write(lines.map((line) => `${terminalText(line)}\n`).join(''));
}

function iso(date: Date | null | undefined): string | null {
  return date ? date.toISOString() : null;
}

/** A job as `--json` prints it (no lease token: it is a capability, not information). */
export function jobToJson(job: Job): Record<string, unknown> {
  return {
    id: job.id,
    type: job.type,
    queue: job.queue,
    status: job.status,
    priority: job.priority,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    lastError: job.lastError,
    deadReason: job.deadReason,
    key: job.key,
    group: job.group,
    eventId: job.eventId,
    source: job.source,
    runAt: iso(job.runAt),
    createdAt: iso(job.createdAt),
    startedAt: iso(job.startedAt),
    finishedAt: iso(job.finishedAt),
    leaseOwner: job.leaseOwner,
    leaseExpiresAt: iso(job.leaseExpiresAt),
    snoozes: job.snoozes,
    progress: job.progress,
    batchId: job.batchId,
    completesBatchId: job.completesBatchId,
    payload: job.payload,
    result: job.result,
  };
}

export function attemptToJson(attempt: Attempt): Record<string, unknown> {
  return {
    attempt: attempt.attempt,
    outcome: attempt.outcome,
    startedAt: iso(attempt.startedAt),
    finishedAt: iso(attempt.finishedAt),
    error: attempt.error,
    stack: attempt.stack,
    workerId: attempt.workerId,
    details: attempt.details,
  };
}

export function replayToJson(replay: Replay): Record<string, unknown> {
  return { at: iso(replay.at), reason: replay.reason, by: replay.by, attemptsBefore: replay.attemptsBefore };
}

export function jobDetailToJson(job: JobDetail): Record<string, unknown> {
  return {
    ...jobToJson(job),
    attemptsLog: job.attemptsLog.map(attemptToJson),
    replays: job.replays.map(replayToJson),
  };
}

/** What every event's JSON starts with, listed or in full. */
function eventIdentityToJson(event: EventSummary | InboundEvent): Record<string, unknown> {
  return { id: event.id, source: event.source, deliveryId: event.deliveryId, type: event.type, receivedAt: iso(event.receivedAt) };
}

export function eventSummaryToJson(event: EventSummary): Record<string, unknown> {
  return { ...eventIdentityToJson(event), bodyBytes: event.bodyBytes, jobCount: event.jobCount };
}

/** A stored event with its headers (secrets hidden) and body. */
export function eventToJson(event: InboundEvent): Record<string, unknown> {
  return { ...eventIdentityToJson(event), headers: visibleHeaders(event.headers), ...bodyToJson(event.rawBody) };
}

export interface Column<Row> {
  readonly header: string;
  readonly value: (row: Row) => string;
  /** Longer cells are cut with an ellipsis. @default 60 */
  readonly maxWidth?: number;
  readonly align?: 'left' | 'right';
}

/** One line of text: newlines and tabs in errors must not break a table row. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * A plain-text table: a header row, then one row per item, columns padded to fit.
 * @example renderTable([{ header: 'ID', value: (j) => j.id }], jobs)
 */
/** The columns every per-queue table shares (stats, queues): the queue, its counts by status, its oldest pending age. */
export function queueCountColumns<Row>(
  queue: (row: Row) => string,
  counts: (row: Row) => StatusCounts,
  oldestPendingAgeMs: (row: Row) => number | null | undefined,
): Column<Row>[] {
  return [
    { header: 'QUEUE', value: queue, maxWidth: 30 },
    ...JOB_STATUSES.map((status) => ({ header: status.toUpperCase(), value: (row: Row) => String(counts(row)[status]), align: 'right' as const })),
    {
      header: 'OLDEST_PENDING',
      value: (row) => {
        const ageMs = oldestPendingAgeMs(row);
        return ageMs === null || ageMs === undefined ? '-' : formatDurationMs(ageMs);
      },
      align: 'right',
    },
  ];
}

export function renderTable<Row>(columns: readonly Column<Row>[], rows: readonly Row[]): string {
  const cells = rows.map((row) =>
    columns.map((column) => {
      const text = oneLine(column.value(row));
      const max = column.maxWidth ?? 60;
      return text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text;
    }),
  );
  const widths = columns.map((column, i) => Math.max(column.header.length, ...cells.map((row) => row[i]!.length)));
  const format = (row: readonly string[]) =>
    row
      .map((cell, i) => (columns[i]!.align === 'right' ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [format(columns.map((c) => c.header)), ...cells.map(format)].join('\n');
}

/** Every line indented by two spaces, for a block under a heading. */
/** A record as aligned `name  value` lines (job, event and batch detail views). */
export function renderFields(fields: ReadonlyArray<readonly [string, string]>): string[] {
  const width = Math.max(...fields.map(([name]) => name.length));
  // A value of several lines (an error with a response excerpt) keeps to its column.
  return fields.map(([name, value]) => `${name.padEnd(width)}  ${value.split('\n').join(`\n${' '.repeat(width + 2)}`)}`);
}

/** At most `most` lines of a text, and then a line saying how many more there are and where. */
export function firstLines(text: string, most: number, where: string): string {
  const lines = text.split('\n');
  if (lines.length <= most) return text;
  return [...lines.slice(0, most), `… ${lines.length - most} more lines (${where})`].join('\n');
}

/** Characters of a body or payload a terminal is shown; --json gives the whole of it. */
export const SHOWN_BODY_CHARS = 64 * 1024;

/**
 * A body or payload for the terminal: at most SHOWN_BODY_CHARS of it, and then a line
 * saying how much was left out (a 1 MiB event would scroll everything else away).
 */
export function boundedBlock(text: string): string {
  if (text.length <= SHOWN_BODY_CHARS) return indent(text);
  const shown = SHOWN_BODY_CHARS.toLocaleString('en');
  return `${indent(text.slice(0, SHOWN_BODY_CHARS))}\n  … the first ${shown} of ${text.length.toLocaleString('en')} characters; --json gives all of it`;
}

export function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}

/** A timestamp for tables: ISO without milliseconds, or `-`. */
export function formatTime(date: Date | null | undefined): string {
  return date ? date.toISOString().replace(/\.\d{3}Z$/, 'Z') : '-';
}

/** The standard job list table (jobs, dead). */
export function renderJobTable(jobs: readonly Job[]): string {
  if (jobs.length === 0) return '(no jobs match)';
  return renderTable<Job>(
    [
      { header: 'ID', value: (j) => j.id, align: 'right' },
      { header: 'STATUS', value: (j) => (j.status === 'dead' && j.deadReason ? `dead(${j.deadReason})` : j.status) },
      { header: 'QUEUE', value: (j) => j.queue, maxWidth: 20 },
      { header: 'TYPE', value: (j) => j.type, maxWidth: 30 },
      { header: 'ATTEMPTS', value: (j) => `${j.attempts}/${j.maxAttempts}`, align: 'right' },
      { header: 'RUN_AT', value: (j) => formatTime(j.runAt) },
      { header: 'SOURCE', value: (j) => j.source ?? '-', maxWidth: 16 },
      { header: 'LAST_ERROR', value: (j) => j.lastError ?? '-', maxWidth: 70 },
    ],
    jobs,
  );
}
