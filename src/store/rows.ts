// Builds the public types (Job, Attempt, Replay, InboundEvent, EventSummary) from stored
// rows, once for both stores. The dialects differ only in how a row arrives: SQLite gives
// times as integer ms and headers as JSON text; PostgreSQL gives Dates (ISO text inside
// json_agg), jsonb headers as objects and bigint counts as strings. `timeOf` and the
// field readers absorb that, so a column added to a table is mapped in one place.

import type { Attempt, Batch, DeadReason, EventSummary, InboundEvent, Job, JobStatus, PausedQueue, Replay } from '../core/types.js';
import type { FinishedMinute, JobInsert, StoredTask } from './store.js';

/** A row as a driver returns it: column name → value. */
export type Row = Record<string, any>;

/** A stored time as a Date: epoch ms (SQLite), a Date (PostgreSQL) or ISO text (json_agg). */
export function timeOf(value: unknown): Date {
  return value instanceof Date ? value : new Date(value as number | string);
}

/** Like timeOf, for nullable columns. */
export function optionalTimeOf(value: unknown): Date | null {
  return value === null || value === undefined ? null : timeOf(value);
}

/** A JSON text column (result, details) as its value; null when the column is. */
export function jsonOf(value: unknown): unknown {
  return value === null || value === undefined ? null : JSON.parse(value as string);
}

/** A listing's page size: 100 unless given, between 1 and 10,000. */
export function clampLimit(limit: number | undefined): number {
  if (limit === undefined) return 100;
  return Math.max(1, Math.min(10_000, Math.floor(limit)));
}

function idOf(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

/** The one Job row builder: a mailroom_job row (`SELECT *` or `RETURNING *`) as a Job. */
export function jobFromRow(row: Row): Job {
  return {
    id: String(row.id),
    queue: row.queue,
    type: row.type,
    status: row.status,
    priority: row.priority,
    payload: JSON.parse(row.payload),
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    lastError: row.last_error ?? null,
    deadReason: (row.dead_reason ?? null) as DeadReason | null,
    key: row.key ?? null,
    group: row.group_key ?? null,
    eventId: idOf(row.event_id),
    source: row.source ?? null,
    runAt: timeOf(row.run_at),
    createdAt: timeOf(row.created_at),
    startedAt: optionalTimeOf(row.started_at),
    finishedAt: optionalTimeOf(row.finished_at),
    leaseOwner: row.lease_owner ?? null,
    leaseExpiresAt: optionalTimeOf(row.lease_expires_at),
    traceContext: row.trace_context ?? null,
    result: jsonOf(row.result),
    snoozes: row.snoozes ?? 0,
    progress: row.progress === null || row.progress === undefined ? null : { fraction: Number(row.progress), note: row.progress_note ?? null },
    batchId: idOf(row.batch_id),
    completesBatchId: idOf(row.completes_batch_id),
  };
}

/**
 * A job just inserted, built from what was inserted, its new id and the times the store's
 * clock gave it (epoch ms): every other column of a new row is unset. Both stores build
 * it so rather than read the row back: SQLite's RETURNING * costs about 20 µs a row in
 * better-sqlite3, two thirds of an insert; PostgreSQL's, a copy of all 31 columns a row
 * in node-postgres, property by property (see jobInsertMany in postgres/sql/job.sql).
 */
export function insertedJob(
  id: string | number,
  job: JobInsert,
  runAtMs: number,
  createdAtMs: number,
  event: { readonly id: string | number; readonly source: string } | null,
  batchId: string | number | null = null,
): Job {
  return {
    id: String(id),
    queue: job.queue,
    type: job.type,
    status: 'pending',
    priority: job.priority,
    payload: JSON.parse(job.payloadJson),
    attempts: 0,
    maxAttempts: job.maxAttempts,
    lastError: null,
    deadReason: null,
    key: job.key,
    group: job.group,
    eventId: event ? String(event.id) : null,
    source: event?.source ?? null,
    runAt: new Date(runAtMs),
    createdAt: new Date(createdAtMs),
    startedAt: null,
    finishedAt: null,
    leaseOwner: null,
    leaseExpiresAt: null,
    traceContext: job.traceContext ?? null,
    result: null,
    snoozes: 0,
    progress: null,
    batchId: batchId === null ? null : String(batchId),
    completesBatchId: null,
  };
}

/** A mailroom_batch row, with its completion job's status as `completion_status` (batchGet), as a Batch. */
export function batchFromRow(row: Row): Batch {
  return {
    id: String(row.id),
    total: Number(row.total),
    done: Number(row.done),
    dead: Number(row.dead),
    thenType: row.then_type,
    completionJobId: idOf(row.completion_job_id),
    completionStatus: (row.completion_status ?? null) as JobStatus | null,
    createdAt: timeOf(row.created_at),
  };
}

/** A mailroom_attempt row as an Attempt. */
export function attemptFromRow(row: Row): Attempt {
  return {
    attempt: row.attempt,
    startedAt: optionalTimeOf(row.started_at),
    finishedAt: optionalTimeOf(row.finished_at),
    outcome: row.outcome,
    error: row.error ?? null,
    stack: row.stack ?? null,
    workerId: row.worker_id ?? null,
    details: jsonOf(row.details),
  };
}

/**
 * The success a `done` job keeps on its own row (no attempt row is written for it), as
 * the last entry of its history.
 */
export function doneAttemptFromJobRow(row: Row): Attempt {
  return {
    attempt: row.attempts,
    startedAt: optionalTimeOf(row.started_at),
    finishedAt: optionalTimeOf(row.finished_at),
    outcome: 'done',
    error: null,
    stack: null,
    workerId: row.lease_owner ?? null,
    details: jsonOf(row.details),
  };
}

/** A mailroom_replay row as a Replay. */
export function replayFromRow(row: Row): Replay {
  return { at: timeOf(row.at), reason: row.reason ?? null, by: row.by ?? null, attemptsBefore: row.attempts_before ?? null };
}

/** A mailroom_event row as an InboundEvent. */
export function eventFromRow(row: Row): InboundEvent {
  return {
    id: String(row.id),
    source: row.source,
    deliveryId: row.delivery_id ?? null,
    type: row.type ?? null,
    headers: typeof row.headers === 'string' ? JSON.parse(row.headers) : row.headers,
    rawBody: Buffer.from(row.body),
    receivedAt: timeOf(row.received_at),
  };
}

/** An event list row (eventList's select) as an EventSummary. */
export function eventSummaryFromRow(row: Row): EventSummary {
  return {
    id: String(row.id),
    source: row.source,
    deliveryId: row.delivery_id ?? null,
    type: row.type ?? null,
    receivedAt: timeOf(row.received_at),
    bodyBytes: Number(row.body_bytes),
    jobCount: Number(row.job_count),
  };
}

/** A mailroom_queue_pause row as a PausedQueue. */
export function pausedQueueFromRow(row: Row): PausedQueue {
  return { queue: row.queue, reason: row.reason ?? null, pausedAt: timeOf(row.paused_at) };
}

/**
 * A task directory row (SQLite keeps keyed as 0/1, PostgreSQL as a boolean). The budget
 * counts only when it was recorded with the row's latest record (migration 0016: older
 * code's record moves recorded_at alone); a schema before 0016 has none.
 */
export function storedTaskFromRow(row: Row): StoredTask {
  const recordedAt = timeOf(row.recorded_at);
  const isBudgetCurrent = row.max_attempts_recorded_at != null && timeOf(row.max_attempts_recorded_at).getTime() === recordedAt.getTime();
  return {
    type: row.type,
    queue: row.queue,
    keyed: row.keyed === true || row.keyed === 1,
    maxAttempts: isBudgetCurrent ? (row.max_attempts ?? null) : null,
    recordedAt,
  };
}

/** One hour unless told; never more than a day, so the read stays a short index range. */
export function finishedWindowMs(windowMs: number | undefined): number {
  if (windowMs === undefined || !Number.isFinite(windowMs)) return 3_600_000;
  return Math.max(60_000, Math.min(86_400_000, Math.floor(windowMs)));
}

/**
 * jobFinishedPerMinute's two reads as minutes, oldest first. `attemptRows` has one row
 * with a null minute: the tail's size and oldest finish, which say whether failed
 * attempts older than the tail were left out.
 */
export function finishedMinutesFromRows(
  jobRows: readonly Row[],
  attemptRows: readonly Row[],
  since: Date,
  scanLimit: number,
): { minutes: FinishedMinute[]; failedAttemptsTruncated: boolean } {
  const byMinute = new Map<number, { done: number; dead: number; failedAttempts: number }>();
  const entry = (minute: unknown) => {
    const key = Number(minute);
    let found = byMinute.get(key);
    if (!found) byMinute.set(key, (found = { done: 0, dead: 0, failedAttempts: 0 }));
    return found;
  };
  for (const row of jobRows) entry(row.minute)[row.status as 'done' | 'dead'] += Number(row.n);
  let failedAttemptsTruncated = false;
  for (const row of attemptRows) {
    if (row.minute === null || row.minute === undefined) {
      failedAttemptsTruncated = Number(row.n) >= scanLimit && row.oldest !== null && timeOf(row.oldest) >= since;
    } else {
      entry(row.minute).failedAttempts += Number(row.n);
    }
  }
  const minutes = [...byMinute.entries()]
    .sort(([a], [b]) => a - b)
    .map(([minute, counts]) => ({ minute: new Date(minute), ...counts }));
  return { minutes, failedAttemptsTruncated };
}
