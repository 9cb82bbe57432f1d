// The seam between Mailroom and its databases. SQLite and PostgreSQL implement all of it;
// nothing above this file asks which store it is on — it asks `capabilities`.
// Every data method takes one XxxParams object (adding a field is never breaking) and an
// optional `now` so tests can pin time instead of sleeping. Times otherwise come from the
// store's own clock (SQLite: this machine's; PostgreSQL: the server's `now()`).

import type {
  Attempt,
  Batch,
  ClaimedJob,
  DeadReason,
  EventSummary,
  InboundEvent,
  Job,
  JobDetail,
  JobStatus,
  PausedQueue,
  StatusCounts,
} from '../core/types.js';
import type { TypeLimits } from './limits.js';
import type { DeliveredAttempt, MessagePublishParams, MessagePublishResult, OutgoingExecutor } from './outgoing-store.js';

export interface StoreCapabilities {
  /** The store can wake idle workers when a job is inserted (LISTEN/NOTIFY). */
  readonly listenNotify: boolean;
  /** Claims skip rows locked by concurrent claimers (FOR UPDATE SKIP LOCKED). */
  readonly skipLocked: boolean;
  /** Workers on several machines can share the store. */
  readonly multiProcess: boolean;
  /** `transactionSync` exists: a user's synchronous transaction on the store's own connection. */
  readonly syncTransactions: boolean;
  /** `transaction` and `fromClient` exist: async transactions and the caller's own client. */
  readonly asyncTransactions: boolean;
  /** `databaseHealth` exists: the server's own health figures (vacuum horizon, dead rows). */
  readonly databaseHealth: boolean;
  /**
   * Every store call is a round trip to a server, so writes folded into fewer calls pay
   * for themselves (PostgreSQL); false where a call is an in-process write (SQLite).
   */
  readonly roundTrips: boolean;
}

/** A job to insert. Policy (queue, maxAttempts) is already resolved by the caller. */
export interface JobInsert {
  readonly type: string;
  /** Serialised JSON of the payload; stores keep it as text. */
  readonly payloadJson: string;
  readonly queue: string;
  readonly priority: number;
  readonly maxAttempts: number;
  /** Absolute time, or null for "now by the store's clock". */
  readonly runAt: Date | null;
  /** Delay from the store's now; used when runAt is null. */
  readonly delayMs: number;
  readonly key: string | null;
  readonly group: string | null;
  /** The enqueuer's trace context to store with the job (Job.traceContext); omitted means none. */
  readonly traceContext?: string | null;
  /** The job's limit key (its task's `limits.key(payload)`); omitted means none. */
  readonly limitKey?: string | null;
}

export interface JobInsertManyParams {
  readonly jobs: readonly JobInsert[];
  readonly now?: Date;
}

export interface JobInsertResult {
  readonly job: Job;
  /** True when a job with the same key (and payload) already existed and was returned. */
  readonly isDuplicate: boolean;
}

/**
 * A batch to insert: its children, all inserted or none, and its completion job (`then`),
 * which the store inserts in the transaction that makes the last child terminal — or in
 * this one when there are no children. Children and `then` carry no key (a duplicate
 * key would make a job this batch does not own count in it); `then` is never due before
 * the last child ends, so its runAt is ignored and its delayMs counts from that moment.
 */
export interface BatchInsertParams {
  readonly children: readonly JobInsert[];
  readonly then: JobInsert;
  readonly now?: Date;
}

export interface BatchInsertResult {
  readonly batch: Batch;
  /** The children, in the order given. */
  readonly jobs: Job[];
}

export interface BatchGetParams {
  readonly id: string;
}

export interface JobGetParams {
  readonly id: string;
}

/** The optional job filters every dialect's filter builder understands (list, replay). */
export interface JobFilter {
  readonly status?: JobStatus;
  readonly type?: string;
  readonly queue?: string;
  readonly source?: string;
  readonly eventId?: string;
  /** Children of this batch (ctx.batch pages through them in id order). */
  readonly batchId?: string;
  /** Case-insensitive substring of `last_error`. */
  readonly errorContains?: string;
}

/** One page of a listing in id order (jobs, events). */
export interface ListPageParams {
  /** @default 100, at most 10,000 */
  readonly limit?: number;
  /** Keyset pagination: only rows after this id in the listing's order (id > after ascending, id < after descending). */
  readonly after?: string;
  /** Newest first when true (dashboard, CLI); default ascending id. */
  readonly descending?: boolean;
  /**
   * Keyset bound on the far side: only rows before this id in the listing's order (id >
   * until descending, id < until ascending). With `after`, a page reads one id range and
   * no more, however rare its matches: the dashboard's error search, which no index
   * serves, walks the table in such ranges.
   */
  readonly until?: string;
}

export interface JobListParams extends JobFilter, ListPageParams {}

export interface EventListParams extends ListPageParams {
  readonly source?: string;
  readonly type?: string;
}

export interface JobClaimParams {
  readonly workerId: string;
  /** Only these types (the worker's registered handlers). Empty means claim nothing. */
  readonly types: readonly string[];
  /** Only these queues; null means every queue. */
  readonly queues: readonly string[] | null;
  readonly limit: number;
  readonly leaseMs: number;
  /** The limits of the worker's limited types (store/limits.ts); omitted or empty: none. */
  readonly limits?: readonly TypeLimits[];
  /**
   * At most this many of the claimed jobs may be of types under a concurrency limit (the
   * type's or per key); omitted: `limit`. A claimed job holds its slot from the claim on,
   * so one waiting in a worker's buffer would hold a slot idle that another worker could
   * use: workers pass the number they can start at once. Rate-only limits are not capped.
   */
  readonly limitedLimit?: number;
  readonly now?: Date;
}

/** What fences a worker's writes: the job id and the token it was given at claim. */
export interface Lease {
  readonly id: string;
  readonly leaseToken: string;
}

export interface JobExtendLeaseParams {
  readonly leases: readonly Lease[];
  readonly leaseMs: number;
  readonly now?: Date;
}

/** What every outcome carries: the fence, and the attempt's details (`ctx.setDetails`). */
interface JobFinishBase extends Lease {
  /** Serialised JSON kept with the attempt (bounded by the caller); omitted or null: none. */
  readonly detailsJson?: string | null;
}

/**
 * How one attempt ended, as jobFinishMany writes it. Every kind is fenced by the lease
 * token: a worker whose lease was taken over (or rescued) changes nothing.
 */
export type JobFinish =
  /** Success: the job is `done`, keeping the handler's return value as `result`. */
  | (JobFinishBase & {
      readonly kind: 'done';
      /** Serialised JSON of the handler's return value (bounded by the caller); omitted or null: none. */
      readonly resultJson?: string | null;
      /**
       * Done inside the handler's own transaction (ctx.complete): the lease token stays on
       * the row, so the `result` finish that follows when the handler returns is fenced too.
       */
      readonly holdLease?: boolean;
      /** The deliver task's success, recorded in the same write, fenced off or not (not with holdLease). */
      readonly delivered?: DeliveredAttempt;
    })
  /** The return value of a handler whose job a `holdLease` success already made done; clears the held token. */
  | (JobFinishBase & { readonly kind: 'result'; readonly resultJson?: string | null })
  /** The handler failed: retry after a delay, or park the job as dead. The attempt is charged. */
  | (JobFinishBase & {
      readonly kind: 'failed';
      readonly error: string;
      /** Kept on the attempt's history row (bounded by the caller). @default null */
      readonly stack?: string | null;
      /** The history row's outcome. */
      readonly attemptOutcome: 'failed' | 'timeout';
      /** Retry after this many ms from the store's now, or null to park the job as dead. */
      readonly retryDelayMs: number | null;
      /** Why, when retryDelayMs is null. @default 'exhausted' */
      readonly deadReason?: Exclude<DeadReason, 'cancelled'>;
    })
  /** Claimed but not run, or stopped on shutdown: back to pending at once, uncharged. */
  | (JobFinishBase & { readonly kind: 'handedBack' })
  /** "Not yet": back to pending after a delay, uncharged, counted in `snoozes`. */
  | (JobFinishBase & {
      readonly kind: 'snoozed';
      readonly delayMs: number;
      /** Kept as the history row's error text. @default null */
      readonly reason?: string | null;
    });

export interface JobFinishManyParams {
  /** Any mix of kinds; one job at most once. */
  readonly finishes: readonly JobFinish[];
  readonly now?: Date;
}

/** One running job's progress, fenced by its lease. */
export interface JobProgress extends Lease {
  /** 0…1 */
  readonly fraction: number;
  readonly note: string | null;
}

export interface JobProgressManyParams {
  readonly updates: readonly JobProgress[];
}

export interface JobRescueParams {
  readonly now?: Date;
  readonly limit?: number;
}

export interface JobRescueResult {
  /** Lease expired, attempts left: back to pending, attempt logged `lost`. */
  readonly requeued: string[];
  /** Lease expired on the last attempt: dead, attempt logged `lost`. */
  readonly dead: string[];
}

export interface JobReplayFilter {
  readonly status?: 'dead' | 'done';
  readonly type?: string;
  readonly source?: string;
  readonly eventId?: string;
  readonly errorContains?: string;
}

export interface JobReplayParams {
  /** Replay exactly these jobs (dead ones; done ones only with `force`). */
  readonly ids?: readonly string[];
  /** Or every job matching this filter. One of ids/filter is required. */
  readonly filter?: JobReplayFilter;
  readonly reason: string | null;
  readonly by: string | null;
  /** Also replay `done` jobs. */
  readonly force?: boolean;
  /** Also replay cancelled jobs (a filter skips them otherwise). */
  readonly includeCancelled?: boolean;
  /** New attempt budget; default keeps the job's own. */
  readonly maxAttempts?: number;
  readonly now?: Date;
}

/** Which pending jobs a retry-now takes when no ids are given (every field optional). */
export type JobRetryNowFilter = Omit<JobFilter, 'status'>;

export interface JobRetryNowParams {
  /** Make exactly these jobs due (pending ones that wait; others are left alone). */
  readonly ids?: readonly string[];
  /** Or every waiting pending job matching this filter. One of ids/filter is required. */
  readonly filter?: JobRetryNowFilter;
  /**
   * With a filter: also jobs that wait only for their delay (never failed). By default a
   * filter takes jobs waiting for a retry only, so "retry the emails" after an outage does
   * not also send every email scheduled for tomorrow. Ids are taken as given.
   */
  readonly includeDelayed?: boolean;
  readonly now?: Date;
}

export interface JobCancelParams {
  readonly id: string;
  readonly reason?: string;
  readonly now?: Date;
}

export interface JobPurgeParams {
  /** Delete `done` jobs finished longer ago than this. */
  readonly doneOlderThanMs: number;
  /** Also delete `dead` jobs finished longer ago than this; omitted keeps them. */
  readonly deadOlderThanMs?: number;
  /** Delete events (and so their dedupe receipts) older than this whose jobs are all gone. */
  readonly eventsOlderThanMs?: number;
  readonly now?: Date;
}

export interface JobPurgeResult {
  readonly jobs: number;
  readonly events: number;
}

export interface JobStatsParams {
  readonly now?: Date;
}

export interface JobStatsResult {
  readonly byQueue: Record<string, StatusCounts>;
  /** Oldest `run_at` among due pending jobs per queue (queues with none are absent). */
  readonly oldestDuePendingAt: Record<string, Date>;
  /** The store's now, so callers compute ages on one clock. */
  readonly now: Date;
  /** Paused queues, by name (they may hold no jobs). */
  readonly paused: readonly PausedQueue[];
}

export interface QueuePauseParams {
  readonly queue: string;
  /** Why, for stats(), the CLI and the dashboard. @default null */
  readonly reason?: string | null;
  readonly now?: Date;
}

export interface QueueResumeParams {
  readonly queue: string;
}

/** What a worker declares about one of its task types (the task directory). */
export interface TaskRecord {
  readonly type: string;
  /** The queue its jobs go to unless enqueue says otherwise. */
  readonly queue: string;
  /** Its per-key limits need a limit key computed from the payload at enqueue. */
  readonly keyed: boolean;
  /** The task's maxAttempts, stamped on each job at enqueue; null: the default (5). */
  readonly maxAttempts: number | null;
}

export interface StoredTask extends TaskRecord {
  readonly recordedAt: Date;
}

export interface TaskRecordParams {
  readonly tasks: readonly TaskRecord[];
  readonly now?: Date;
  /** false: the schema predates the budget's columns (0016; opened without migrating): record queue and keyed only. @default true */
  readonly withBudget?: boolean;
}

export interface JobFinishedPerMinuteParams {
  /** How far back from the store's now. @default 3600000 (one hour), at most one day */
  readonly windowMs?: number;
  readonly now?: Date;
}

/** Jobs that finished, and attempts that failed, in one minute (UTC, on the store's clock). */
export interface FinishedMinute {
  /** Start of the minute. */
  readonly minute: Date;
  /** Jobs that became `done` in the minute. */
  readonly done: number;
  /** Jobs that became `dead` in the minute (attempts exhausted, `Permanent`, cancelled). */
  readonly dead: number;
  /** Attempts that failed, timed out or were lost in the minute (retried or not). */
  readonly failedAttempts: number;
}

export interface JobFinishedPerMinuteResult {
  /** Minutes with anything in them, oldest first; quiet minutes are absent. */
  readonly minutes: FinishedMinute[];
  /** The store's now, the window's end. */
  readonly now: Date;
  /**
   * True when more failed attempts fell in the window than the bounded read looks at
   * (ATTEMPT_SCAN_LIMIT): `failedAttempts` then counts only the newest ones.
   */
  readonly failedAttemptsTruncated: boolean;
}

/**
 * The newest attempt rows the per-minute read looks at. The attempt table has no index on
 * finished_at (adding one would tax every attempt write for a chart); attempts are written
 * when they finish, so the newest ids are the newest finishes, and reading a bounded tail
 * of the primary key stays cheap at any table size.
 */
export const ATTEMPT_SCAN_LIMIT = 10_000;

export interface JobClaimableParams {
  readonly types: readonly string[];
  readonly queues: readonly string[] | null;
  /** As JobClaimParams.limits: a job over a limit is not claimable, and a rate window's end is a time to wake. */
  readonly limits?: readonly TypeLimits[];
  readonly now?: Date;
}

export interface JobClaimableResult {
  /** Whether a job is claimable now (same predicate as jobClaim). */
  readonly hasClaimable: boolean;
  /** Earliest future run_at of a pending job these workers could run, for sleeping. */
  readonly nextRunAt: Date | null;
  /**
   * How long until nextRunAt, on the store's clock. A worker sleeps this long rather than
   * comparing nextRunAt with its own clock, which may be off (five minutes fast, it found
   * every future job overdue and claimed in a loop, about 330 times a second).
   */
  readonly nextRunInMs: number | null;
}

export interface EventInsert {
  readonly source: string;
  /** null: no dedupe for this event. */
  readonly deliveryId: string | null;
  readonly type: string | null;
  readonly headers: Record<string, string>;
  readonly rawBody: Buffer;
}

export interface EventInsertWithJobsParams {
  readonly event: EventInsert;
  /** Jobs fanned out from the event; the store links them to it. */
  readonly jobs: readonly JobInsert[];
  readonly now?: Date;
}

export interface EventInsertWithJobsResult {
  readonly event: InboundEvent;
  readonly jobs: Job[];
  /** True when (source, deliveryId) was already stored: nothing was created. */
  readonly isDuplicate: boolean;
}

export interface EventGetParams {
  readonly id: string;
}

export interface DatabaseHealthParams {
  readonly now?: Date;
}

/**
 * What a database server with its own vacuum can say about its health, read from its
 * statistics views. Figures a role may not read are left out, never guessed.
 */
export interface DatabaseHealthResult {
  /**
   * Age of the oldest open transaction in Mailroom's database that holds back vacuum
   * (an assigned transaction id or a held snapshot; prepared transactions included), by
   * the server's clock; 0 when there is none. Only sessions the role may see count.
   */
  readonly oldestTransactionAgeMs: number;
  /** Dead row versions not yet reclaimed, per Mailroom table (`mailroom_job`, …). */
  readonly deadTuplesByTable: Record<string, number>;
}

export interface MigrateParams {
  /**
   * Stop after this version instead of the newest the code knows: upgrade tests build
   * each earlier schema this way, and an operator can stage a rollout with it.
   */
  readonly toVersion?: number;
}

export interface MigrateResult {
  readonly applied: number[];
  readonly version: number;
}

/**
 * Every data method. A store is one; a transaction-bound executor is another with the
 * same methods, so code written against this runs inside or outside a transaction.
 */
export interface StoreExecutor extends OutgoingExecutor {
  /** One batch with its counts and its completion job's id and status; null when unknown. */
  batchGet(params: BatchGetParams): Promise<Batch | null>;
  /** A batch record and its children in one transaction (the completion job too, when there are no children). */
  batchInsert(params: BatchInsertParams): Promise<BatchInsertResult>;
  eventGet(params: EventGetParams): Promise<InboundEvent | null>;
  eventInsertWithJobs(params: EventInsertWithJobsParams): Promise<EventInsertWithJobsResult>;
  /** Stored events, with no headers or body, and how many jobs each fanned out to. */
  eventList(params: EventListParams): Promise<EventSummary[]>;
  jobCancel(params: JobCancelParams): Promise<Job | null>;
  jobClaim(params: JobClaimParams): Promise<ClaimedJob[]>;
  jobClaimable(params: JobClaimableParams): Promise<JobClaimableResult>;
  jobExtendLease(params: JobExtendLeaseParams): Promise<string[]>;
  /**
   * The one outcome writer: every finish in one transaction (with the status counters),
   * each fenced by its lease token. Returns the ids it wrote, in the caller's order; a
   * fenced-off finish is left out.
   */
  jobFinishMany(params: JobFinishManyParams): Promise<string[]>;
  /** Jobs done and dead, and failed attempts, per minute over a recent window (the dashboard's chart). */
  jobFinishedPerMinute(params: JobFinishedPerMinuteParams): Promise<JobFinishedPerMinuteResult>;
  jobGet(params: JobGetParams): Promise<JobDetail | null>;
  /** Running jobs' progress, each fenced by its lease token; returns the ids written, in the caller's order. */
  jobProgressMany(params: JobProgressManyParams): Promise<string[]>;
  jobInsertMany(params: JobInsertManyParams): Promise<JobInsertResult[]>;
  jobList(params: JobListParams): Promise<Job[]>;
  jobPurge(params: JobPurgeParams): Promise<JobPurgeResult>;
  jobReplay(params: JobReplayParams): Promise<string[]>;
  jobRescue(params: JobRescueParams): Promise<JobRescueResult>;
  /**
   * Pending jobs that wait become due now (by id: for a retry or a delay; by filter: for a
   * retry, unless includeDelayed); attempts, history and group order are untouched.
   * Returns the ids it moved, in id order.
   */
  jobRetryNow(params: JobRetryNowParams): Promise<string[]>;
  jobStats(params: JobStatsParams): Promise<JobStatsResult>;
  /**
   * Pause a queue: no claim anywhere takes its jobs until it is resumed (running jobs
   * finish; enqueue goes on). Pausing a paused queue updates its reason. True when this
   * call paused it.
   */
  queuePause(params: QueuePauseParams): Promise<boolean>;
  /** Resume a paused queue (and wake its workers). True when it was paused. */
  queueResume(params: QueueResumeParams): Promise<boolean>;
  /** Every paused queue, by name: for a worker that holds claimed jobs it has not started. */
  queuePausedList(): Promise<PausedQueue[]>;
  /** Record task types as a starting worker registered them; a newer record replaces an older one. */
  taskRecord(params: TaskRecordParams): Promise<void>;
  /** Every recorded task type, by name. */
  taskList(): Promise<StoredTask[]>;
}

/** The synchronous slice a SQLite user transaction gets (`capabilities.syncTransactions`). */
export interface SyncStoreTransaction {
  /** The store's own database handle (better-sqlite3 `Database`). */
  readonly db: unknown;
  batchInsert(params: BatchInsertParams): BatchInsertResult;
  jobInsertMany(params: JobInsertManyParams): JobInsertResult[];
  /** The outcome writer inside this transaction (ctx.complete). */
  jobFinishMany(params: JobFinishManyParams): string[];
  /** Publish an outgoing message inside this transaction (the outbox). */
  messagePublish(params: MessagePublishParams): MessagePublishResult;
}

export interface Store extends StoreExecutor {
  readonly capabilities: StoreCapabilities;
  /** A short human description for logs: kind, location (never credentials) and durability. */
  readonly description: string;
  /** Durability in force, for stats() and the startup log. */
  readonly durability: Record<string, string>;

  /**
   * Apply pending migrations (locked against concurrent migrators); refuse a schema with a
   * migration that needs newer code than this (store/migrator.ts).
   */
  migrate(params?: MigrateParams): Promise<MigrateResult>;
  /** Throws SchemaTooNewError when this code must not run against the database, else reports how far it is. */
  schemaVersion(): Promise<{ database: number; code: number }>;
  /** Cheap liveness check of the store (readyz). */
  ping(): Promise<void>;
  close(): Promise<void>;

  /** capabilities.syncTransactions: taskList, synchronously (an enqueue must reach its insert without an await). */
  taskListSync?(): StoredTask[];
  /** capabilities.syncTransactions: run fn in one transaction on the store's connection. */
  transactionSync?<T>(fn: (tx: SyncStoreTransaction) => T): T;
  /** capabilities.asyncTransactions: run fn in one transaction; rollback if it throws. */
  transaction?<T>(fn: (tx: StoreExecutor & { readonly client: unknown }) => Promise<T>): Promise<T>;
  /** capabilities.asyncTransactions: an executor on the caller's own client/transaction. */
  fromClient?(client: unknown): StoreExecutor;

  /** capabilities.databaseHealth: vacuum-related health of the store's database (metrics). */
  databaseHealth?(params: DatabaseHealthParams): Promise<DatabaseHealthResult>;

  /** capabilities.listenNotify: call onJob when jobs may have become available. */
  subscribe?(onJob: (queue: string | null) => void): Promise<() => Promise<void>>;
}

export type { Attempt, Batch, PausedQueue };
