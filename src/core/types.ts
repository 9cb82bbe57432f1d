// The domain shapes every layer shares: jobs, attempts, events. Plain data, no I/O.
// Stores return these; the facade, worker, CLI and dashboard read them.

/** Where a job is in its life. `dead` is terminal until a replay; `done` is terminal. */
export type JobStatus = 'pending' | 'running' | 'done' | 'dead';
export const JOB_STATUSES: readonly JobStatus[] = ['pending', 'running', 'done', 'dead'];

/** How one attempt ended. A first-try `done` may live on the job row only. */
export type AttemptOutcome = 'done' | 'failed' | 'timeout' | 'lost' | 'handed_back' | 'snoozed';

/** Why a job is dead: its attempts ran out, it threw `Permanent`, or it was cancelled. */
export type DeadReason = 'exhausted' | 'permanent' | 'cancelled';

export interface Attempt {
  readonly attempt: number;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  readonly outcome: AttemptOutcome;
  readonly error: string | null;
  /** Where a failure was thrown: the error's stack, cut to a few KiB; null for other outcomes. */
  readonly stack: string | null;
  readonly workerId: string | null;
  /** What the handler recorded with `ctx.setDetails()` (parsed JSON); null when nothing. */
  readonly details: unknown;
}

export interface Replay {
  readonly at: Date;
  readonly reason: string | null;
  readonly by: string | null;
  /**
   * How many `attemptsLog` entries came before this replay (attempt numbers start again
   * after it); null for replays recorded by a release that did not keep it.
   */
  readonly attemptsBefore: number | null;
}

export interface Job<P = unknown> {
  /** Decimal string of an increasing integer; enqueue order is id order. */
  readonly id: string;
  readonly queue: string;
  readonly type: string;
  readonly status: JobStatus;
  readonly priority: number;
  readonly payload: P;
  /** Charged attempts since the job was created or last replayed. */
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly lastError: string | null;
  readonly deadReason: DeadReason | null;
  readonly key: string | null;
  readonly group: string | null;
  /** The inbound event this job was fanned out from, if any. */
  readonly eventId: string | null;
  /** The ingress source of that event, if any. */
  readonly source: string | null;
  readonly runAt: Date;
  readonly createdAt: Date;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
  readonly leaseOwner: string | null;
  readonly leaseExpiresAt: Date | null;
  /**
   * The W3C trace context of whoever enqueued the job (the OpenTelemetry propagator's
   * carrier as JSON, e.g. `{"traceparent":"00-…"}`); its attempts continue that trace.
   * null when no propagator was active at enqueue.
   */
  readonly traceContext: string | null;
  /** A done job's handler return value (parsed JSON); null when it returned nothing or is not done. */
  readonly result: unknown;
  /** Times the job was snoozed (`throw new Snooze(ms)`) since it was created or last replayed. */
  readonly snoozes: number;
  /** What the handler last reported with `ctx.progress()` (kept after it settles); null when nothing. */
  readonly progress: JobProgressReport | null;
  /** The batch this job is a child of (`mr.enqueueBatch`); null for a job outside a batch. */
  readonly batchId: string | null;
  /** The batch this job is the completion job of (its `then`); null for every other job. */
  readonly completesBatchId: string | null;
}

export interface JobProgressReport {
  /** 0…1 */
  readonly fraction: number;
  readonly note: string | null;
}

export interface JobDetail<P = unknown> extends Job<P> {
  readonly attemptsLog: Attempt[];
  readonly replays: Replay[];
}

/** A job as a worker holds it: the lease token fences every outcome it writes. */
export interface ClaimedJob<P = unknown> extends Job<P> {
  readonly leaseToken: string;
}

/** A stored inbound webhook: headers minus secrets, body byte-exact. */
export interface InboundEvent {
  readonly id: string;
  readonly source: string;
  readonly deliveryId: string | null;
  readonly type: string | null;
  readonly headers: Record<string, string>;
  readonly rawBody: Buffer;
  readonly receivedAt: Date;
}

/** A stored event as a list shows it: no headers or body, their size and its jobs' count. */
export interface EventSummary {
  readonly id: string;
  readonly source: string;
  readonly deliveryId: string | null;
  readonly type: string | null;
  readonly receivedAt: Date;
  readonly bodyBytes: number;
  /** Jobs the event fanned out to (0 for one no task took, such as a filtered `ping`). */
  readonly jobCount: number;
}

export type StatusCounts = Record<JobStatus, number>;

/**
 * A fan-out (`mr.enqueueBatch`): its children, counted as they become terminal, and the
 * completion job enqueued once when the last of them does. `done + dead` is the progress
 * (terminal / total); a replayed child moves its count back until it ends again.
 */
export interface Batch {
  readonly id: string;
  /** Children enqueued with the batch. */
  readonly total: number;
  /** Children that are `done` now. */
  readonly done: number;
  /** Children that are `dead` now (failed for good, cancelled, or lost on their last attempt). */
  readonly dead: number;
  /** The completion job's type (`then.type`). */
  readonly thenType: string;
  /** The completion job, once the last child became terminal; null before. */
  readonly completionJobId: string | null;
  /** That job's status now; null before it exists (or once it is purged). */
  readonly completionStatus: JobStatus | null;
  readonly createdAt: Date;
}

/** A queue nothing claims from until it is resumed (mr.pauseQueue). */
export interface PausedQueue {
  readonly queue: string;
  readonly reason: string | null;
  readonly pausedAt: Date;
}

export interface JobStats {
  readonly byStatus: StatusCounts;
  readonly byQueue: Record<string, StatusCounts>;
  /** Age of the oldest due pending job, across queues; 0 when none is due. */
  readonly oldestPendingAgeMs: number;
  readonly oldestPendingAgeMsByQueue: Record<string, number>;
  /** Paused queues, by name; a paused queue's jobs wait (its due ones still age). */
  readonly paused: readonly PausedQueue[];
}

export function emptyStatusCounts(): StatusCounts {
  return { pending: 0, running: 0, done: 0, dead: 0 };
}
