// The Mailroom facade: open a store, register tasks, enqueue, run workers, and operate on
// jobs (get, list, replay, cancel, purge, stats). Store-agnostic: it asks the store for
// capabilities, never for its kind.

import { EventEmitter } from 'node:events';
import type BetterSqlite3 from 'better-sqlite3';
import type { PoolClient } from 'pg';
import { checkEventIdentity } from './core/event-identity.js';
import { parseEventBody } from './core/event-body.js';
import { ClosedError, InvalidArgumentError, JobNotFoundError, JobStateError, LeaseLostError, LimitKeyUnknownError, UnsupportedError, MailroomError } from './core/errors.js';
import { assertKnownOptions, optionKeys } from './core/known-options.js';
import { DEFAULT_QUEUE, DEFAULT_MAX_ATTEMPTS, assertPositiveInteger } from './core/retry-policy.js';
import { signalClosed, signalOpened } from './core/resource-signals.js';
import { TASK_DEFINITION_KEYS, TaskRegistry } from './core/task-registry.js';
import { TASK_BUDGET_MIGRATION, TASK_DIRECTORY_MIGRATION, TaskDirectory } from './core/task-directory.js';
import type { PayloadOf, TaskDefinition, TaskHandler } from './core/task-registry.js';
import { JOB_STATUSES, emptyStatusCounts } from './core/types.js';
import type { Batch, EventSummary, InboundEvent, Job, JobDetail, JobStats, JobStatus, StatusCounts } from './core/types.js';
import { createLogger } from './log.js';
import type { Logger } from './log.js';
import { openStore } from './store/open-store.js';
import type { SqliteSynchronous } from './store/store-url.js';
import type {
  BatchInsertParams,
  EventInsert,
  EventInsertWithJobsResult,
  EventListParams,
  JobInsert,
  JobListParams,
  Store,
  StoreExecutor,
  JobFinish,
} from './store/store.js';
import { traceEnqueue } from './tracing.js';
import { Worker } from './worker/worker.js';
import { CronScheduler } from './maintenance/cron-scheduler.js';
import { DEFAULT_DONE_RETENTION_MS, startRetention, validateRetention } from './maintenance/retention.js';
import type { RetentionSettings } from './maintenance/retention.js';
import { MaintenanceRunner } from './maintenance/maintenance-runner.js';
import type { ScheduleOptions } from './maintenance/cron-scheduler.js';
import type { WorkerOptions } from './worker/worker.js';
import { DeliveriesApi, EndpointsApi, MessagesApi } from './outgoing/endpoints-api.js';
import { checkText, payloadJsonOf } from './outgoing/outgoing-input.js';
import type { MessagePublishParams, MessagePublishResult } from './store/outgoing-store.js';
import { DELIVER_TASK, createDeliverTask } from './tasks/deliver/deliver-task.js';
import type { EndpointDisableCause } from './tasks/deliver/deliver-task.js';
import { resolveDeliverSettings } from './tasks/deliver/deliver-settings.js';
import type { DeliverSettings, EndpointsOptions } from './tasks/deliver/deliver-settings.js';
import { PortalApi } from './portal/portal-api.js';
import type { PortalOptions } from './portal/portal-api.js';

export interface MailroomOptions {
  /**
   * A store URL (`sqlite:./data/mailroom.db`, a bare path, `sqlite::memory:`,
   * `postgres://…`), or an open better-sqlite3 Database to share with your own tables.
   * @default 'sqlite:./data/mailroom.db'
   */
  readonly db?: string | object;
  /** SQLite durability (see docs/stores.md). @default 'full' */
  readonly synchronous?: SqliteSynchronous;
  /** Run migrations on open. Set false when `mailroom migrate` runs them separately. @default true */
  readonly migrate?: boolean;
  /** PostgreSQL schema for Mailroom's tables (or `?schema=` on the URL). */
  readonly schema?: string;
  /** A pino logger; by default one is created (level from MAILROOM_LOG_LEVEL, else info). */
  readonly logger?: Logger;
  /**
   * How long a write waits for a lock held by another connection before it fails with
   * StoreUnavailableError (ingress: 503). SQLite: every write. PostgreSQL: ingress's write
   * (other statements wait as PostgreSQL waits). Infinity: wait as long as the lock is held. @default 5000
   */
  readonly lockDeadlineMs?: number;
  /** Use this store instead of opening one from `db` (tests, custom wiring). */
  readonly store?: Store;
  /**
   * Purge done jobs (with their history) and unreferenced events past a window, in the
   * background of a process that runs a worker: it starts with the first `mr.work()`
   * and stops with `mr.close()`. `false` leaves it to another process or to `mr.purge()`.
   * @default { doneMs: 7 days, intervalMs: 10 minutes }; dead jobs are kept
   */
  readonly retention?: RetentionSettings | false;
  /**
   * Outgoing webhooks: the SSRF guard's allowlist, timeouts, per-endpoint concurrency and
   * rate, the breaker and auto-disable (docs/outgoing.md). @default the SPEC §6a policy
   */
  readonly endpoints?: EndpointsOptions;
  /** The tenant portal: the secret that signs its links and the URL they start with (docs/dashboard.md). */
  readonly portal?: PortalOptions;
}

export interface PublishOptions {
  /** The customer the message is for: it goes to this tenant's matching endpoints. */
  readonly tenant: string;
  /** Idempotency key within the tenant: publishing it again returns the stored message. */
  readonly key?: string;
  /** PostgreSQL: publish inside your own open transaction on this client (the outbox). */
  readonly client?: unknown;
}

/** What publish stored: the message, a delivery per matching endpoint, and whether it was there already. */
export type PublishResult = MessagePublishResult;

/** What `mr.outgoingEvents` emits, with each event's arguments. */
export interface OutgoingEvents {
  /** A delivery of this process disabled its endpoint: it answered 410 (`gone`) or failed for too long (`failing`). */
  endpointDisabled: [endpointId: string, cause: EndpointDisableCause];
}

export interface EnqueueOptions {
  /** Idempotency key: enqueueing it again returns the existing job (same payload) or throws KeyConflictError. */
  readonly key?: string;
  /** Ordering key: jobs sharing a group run one at a time, in enqueue order. */
  readonly group?: string;
  /** Higher runs first within a queue: an integer from -2147483648 to 2147483647. @default 0 */
  readonly priority?: number;
  /** @default the task's queue, else 'default' */
  readonly queue?: string;
  /** Run no earlier than this (not with delayMs). */
  readonly runAt?: Date;
  /** Run no earlier than this many ms from now (store clock; not with runAt). */
  readonly delayMs?: number;
  /** @default the task's maxAttempts, else 5 */
  readonly maxAttempts?: number;
  /** PostgreSQL: enqueue inside your own open transaction on this client. */
  readonly client?: unknown;
}

export interface EnqueueManyItem<T extends string = string> {
  readonly type: T;
  readonly payload: PayloadOf<T>;
  readonly options?: Omit<EnqueueOptions, 'client'>;
}

/** The completion job of a batch: a job type and payload, with the enqueue options that make sense for it. */
export type BatchThen<T extends string = string> = {
  readonly type: T;
  readonly payload: PayloadOf<T>;
} & Omit<EnqueueOptions, 'client' | 'key' | 'runAt' | 'group'>;

export interface PauseQueueOptions {
  /** Why, shown by stats(), the CLI, metrics' logs and the dashboard. */
  readonly reason?: string;
}

export interface EnqueueBatchOptions {
  /**
   * The completion job, enqueued exactly once, in the transaction that makes the last
   * child `done` or `dead` (at once for a batch without children). Its `delayMs` counts
   * from that moment. Its handler reads the batch through `ctx.batch`.
   */
  readonly then: BatchThen;
  /** PostgreSQL: enqueue inside your own open transaction on this client. */
  readonly client?: unknown;
}

/** A batch as enqueueBatch returns it: the record and its children, in the order given. */
export interface EnqueuedBatch extends Batch {
  readonly jobs: Job[];
}

/** Filters for listJobs: the store's own list parameters (limit defaults to 100). */
export type ListJobsOptions = JobListParams;

/** Filters for listEvents: source, type, and a page in id order (limit defaults to 100). */
export type ListEventsOptions = EventListParams;

/**
 * A job an inbound event fans out to. Its payload is the event (the handler gets the
 * parsed body); queue and attempt budget come from the task, like any enqueue's.
 */
export interface IngestJob {
  readonly type: string;
  /** @default 0 */
  readonly priority?: number;
  /** Ordering group; null or omitted for none. */
  readonly group?: string | null;
}

/** A verified webhook and the jobs it fans out to, stored together by `ingest`. */
export interface IngestParams {
  readonly event: EventInsert;
  readonly jobs: readonly IngestJob[];
}

export type ReplayTarget =
  | { readonly id: string }
  | { readonly ids: readonly string[] }
  | {
      readonly status: 'dead' | 'done';
      readonly type?: string;
      readonly source?: string;
      readonly eventId?: string;
      readonly errorContains?: string;
    };

export interface ReplayOptions {
  /** Recorded with the replay. */
  readonly reason?: string;
  /** Who replayed (recorded). */
  readonly by?: string;
  /** Allow replaying `done` jobs. */
  readonly force?: boolean;
  /** Include cancelled jobs in a filtered replay. */
  readonly includeCancelled?: boolean;
  /** A new attempt budget; default keeps each job's own. */
  readonly maxAttempts?: number;
}

export interface ReplayResult {
  readonly count: number;
  readonly ids: string[];
}

/** Which pending jobs `retryNow` makes due: every field narrows; `{}` takes every job waiting for a retry. */
export interface RetryNowFilter {
  readonly type?: string;
  readonly queue?: string;
  readonly source?: string;
  readonly eventId?: string;
  /** Case-insensitive substring of the last error. */
  readonly errorContains?: string;
  /**
   * Also jobs that wait only for their delay or a snooze (no last error). By default a
   * filter takes the jobs waiting for a retry, so retrying after an outage does not also
   * run now every job scheduled for later. @default false
   */
  readonly includeDelayed?: boolean;
}

export interface RetryNowResult {
  /** Jobs that were waiting and are due now. */
  readonly count: number;
  readonly ids: string[];
}

export interface PurgeOptions {
  /** Delete `done` jobs finished longer ago than this. @default 7 days */
  readonly olderThanMs?: number;
  /** Also delete `dead` jobs finished longer ago than this. @default never */
  readonly deadOlderThanMs?: number;
}

export interface MailroomStats extends JobStats {
  /** What the store promises about durability (SQLite synchronous modes, etc.). */
  readonly durability: Record<string, string>;
}

export { DEFAULT_DONE_RETENTION_MS };

/** Whether the store holds any outgoing endpoint (false on a schema that predates them). */
async function hasEndpoints(store: Store): Promise<boolean> {
  try {
    return (await store.endpointList({ limit: 1 })).length > 0;
  } catch {
    return false;
  }
}

// The keys each options object of the API takes; a key outside them is a typo (known-options.ts).
const OPEN_OPTION_KEYS = optionKeys<MailroomOptions>()({
  db: true,
  synchronous: true,
  migrate: true,
  schema: true,
  logger: true,
  lockDeadlineMs: true,
  store: true,
  retention: true,
  endpoints: true,
  portal: true,
});
const ENQUEUE_OPTION_KEYS = optionKeys<EnqueueOptions>()({ key: true, group: true, priority: true, queue: true, runAt: true, delayMs: true, maxAttempts: true, client: true });
const WORKER_OPTION_KEYS = optionKeys<WorkerOptions>()({ concurrency: true, queues: true, pollMs: true, leaseMs: true, prefetch: true, workerId: true });
const LIST_JOBS_KEYS = optionKeys<ListJobsOptions>()({
  status: true,
  type: true,
  queue: true,
  source: true,
  eventId: true,
  batchId: true,
  errorContains: true,
  limit: true,
  after: true,
  descending: true,
  until: true,
});
const RETRY_NOW_FILTER_KEYS = optionKeys<RetryNowFilter>()({ type: true, queue: true, source: true, eventId: true, errorContains: true, includeDelayed: true });
const REPLAY_FILTER_KEYS = optionKeys<Extract<ReplayTarget, { status: unknown }>>()({ status: true, type: true, source: true, eventId: true, errorContains: true });
const REPLAY_OPTION_KEYS = optionKeys<ReplayOptions>()({ reason: true, by: true, force: true, includeCancelled: true, maxAttempts: true });
const PUBLISH_OPTION_KEYS = optionKeys<PublishOptions>()({ tenant: true, key: true, client: true });
const BATCH_OPTION_KEYS = optionKeys<EnqueueBatchOptions>()({ then: true, client: true });
const BATCH_THEN_KEYS = optionKeys<BatchThen>()({ type: true, payload: true, priority: true, queue: true, delayMs: true, maxAttempts: true });
const PAUSE_OPTION_KEYS = optionKeys<PauseQueueOptions>()({ reason: true });

/** Where a job to insert comes from, when not from an enqueue of the API with its payload as given. */
interface InsertSource {
  /** Webhook ingress: a job it cannot key is stored unkeyed (with a warning), never refused. */
  readonly isIngress?: boolean;
  /** What the task's `limits.key` reads, when that is not the stored payload (ingress's parsed body, a delivery's). */
  readonly limitPayload?: () => unknown;
}

/** A job's limit key from its task's `limits.key`, checked: a string (a number is turned into one). */
function limitKeyOf(type: string, key: (payload: unknown) => string | number, payload: unknown): string {
  let value: unknown;
  try {
    value = key(payload);
  } catch (cause) {
    throw new MailroomError('MR_ERR_INVALID_ARGUMENT', `limits.key of "${type}" threw: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') throw new InvalidArgumentError(`limits.key of "${type}" must return a string (it returned ${typeof value})`);
  if (value.includes(NUL)) throw new InvalidArgumentError(`limits.key of "${type}" returned a key with the NUL character (\\u0000)`);
  return value;
}

/**
 * The names a job is stored under (type, queue, key, group, limit key) hold no NUL:
 * PostgreSQL's text cannot (SQLite's can), so both stores refuse it alike.
 */
const NUL = '\u0000';

function assertNoNul(value: string, name: string): void {
  if (value.includes(NUL)) throw new InvalidArgumentError(`${name} must not contain the NUL character (\\u0000)`);
}

/** The one rule for a queue name, for enqueue and pause alike. */
function assertQueueName(queue: unknown): asserts queue is string {
  if (typeof queue !== 'string' || queue === '') throw new InvalidArgumentError('queue must be a non-empty string');
  assertNoNul(queue, 'queue');
}

/** A job's priority, as PostgreSQL's 4-byte integer column holds it. */
const MIN_PRIORITY = -2_147_483_648;
const MAX_PRIORITY = 2_147_483_647;

/**
 * A job from an event stores a null payload: the executor hands its handler the event's
 * parsed body instead, so the body is stored once however many jobs it fans out to.
 */
const EVENT_PAYLOAD = null;

export interface SyncTransaction {
  /** The store's own better-sqlite3 Database, for your writes in the same transaction. */
  readonly db: BetterSqlite3.Database;
  enqueue<T extends string>(type: T, payload: PayloadOf<T>, options?: Omit<EnqueueOptions, 'client'>): Job<PayloadOf<T>>;
  /** mr.enqueueBatch inside this transaction. */
  enqueueBatch(children: readonly EnqueueManyItem[], options: Omit<EnqueueBatchOptions, 'client'>): EnqueuedBatch;
  /** Publish an outgoing webhook message in this transaction (mr.publish). */
  publish(type: string, payload: unknown, options: Omit<PublishOptions, 'client'>): PublishResult;
}

export interface AsyncTransaction {
  /** The transaction's node-postgres client, for your writes in it. */
  readonly client: PoolClient;
  enqueue<T extends string>(type: T, payload: PayloadOf<T>, options?: Omit<EnqueueOptions, 'client'>): Promise<Job<PayloadOf<T>>>;
  /** mr.enqueueBatch inside this transaction. */
  enqueueBatch(children: readonly EnqueueManyItem[], options: Omit<EnqueueBatchOptions, 'client'>): Promise<EnqueuedBatch>;
  /** Publish an outgoing webhook message in this transaction (mr.publish). */
  publish(type: string, payload: unknown, options: Omit<PublishOptions, 'client'>): Promise<PublishResult>;
}

export class Mailroom {
  readonly store: Store;
  readonly log: Logger;
  private readonly registry = new TaskRegistry();
  /** What workers anywhere recorded of their task types, for types this process did not register. */
  private readonly directory: TaskDirectory;
  /** This process's task records in flight (close() waits for them). */
  private readonly taskRecords = new Set<Promise<void>>();
  /** What this process last recorded in the task directory (or is recording), to write it once. */
  private recordedTasks: string | null = null;
  /** Types ingress stored jobs for without the limit key their task needs (warned once each). */
  private readonly keylessTypes = new Set<string>();
  /** Types whose `limits.key` failed on a webhook's event: warned once each (limitKeyField). */
  private readonly unkeyableTypes = new Set<string>();
  /** Types enqueued here that neither this process nor any worker's record knew (warned once each). */
  private readonly unknownTypes = new Set<string>();
  private readonly workers = new Set<Worker>();
  /** Periodic store work of this process: cron slots, retention, each worker's rescue sweep. */
  private readonly maintenance: MaintenanceRunner;
  private readonly scheduler: CronScheduler;
  private readonly ownsStore: boolean;
  private readonly retention: RetentionSettings | false;
  /** Retention runs under `maintenance` from the first mr.work() on; close() stops it with the rest. */
  private isRetentionStarted = false;
  private isClosed = false;
  private closing: Promise<void> | null = null;
  /** Types registered by Mailroom itself (until the user registers their own under the name). */
  private readonly builtInTypes = new Set<string>();
  private readonly deliverSettings: DeliverSettings;
  /**
   * `endpointDisabled` (endpointId, cause: 'gone' | 'failing') when a delivery of this
   * process disabled an endpoint (metrics). Typed by its event map: an untyped emitter
   * was declared as `EventEmitter<[never]>`, which newer @types/node refuse to compile.
   */
  readonly outgoingEvents = new EventEmitter<OutgoingEvents>();
  /** Outgoing webhook endpoints of your tenants (SPEC §6a). */
  readonly endpoints: EndpointsApi;
  /** Published outgoing messages. */
  readonly messages: MessagesApi;
  /** Deliveries of messages to endpoints. */
  readonly deliveries: DeliveriesApi;
  /** Signed links to the tenant portal (SPEC §9a). */
  readonly portal: PortalApi;

  /**
   * @param hasTaskBudget The schema has the task directory's budget columns (0016); false
   *   only when opened without migrating an older one.
   */
  private constructor(
    store: Store,
    log: Logger,
    ownsStore: boolean,
    retention: RetentionSettings | false,
    deliver: DeliverSettings,
    portal: PortalApi,
    private readonly hasTaskBudget: boolean,
  ) {
    this.portal = portal;
    this.store = store;
    this.log = log;
    this.ownsStore = ownsStore;
    this.retention = retention;
    this.deliverSettings = deliver;
    const outgoing = {
      store,
      settings: deliver,
      log,
      deliverJob: () => this.deliverJob(),
      startDelivering: () => this.startDelivering(),
      wakeWorkers: () => this.wakeWorkers(),
      assertOpen: () => this.assertOpen(),
    };
    this.endpoints = new EndpointsApi(outgoing);
    this.messages = new MessagesApi(outgoing);
    this.deliveries = new DeliveriesApi(outgoing);
    this.maintenance = new MaintenanceRunner(log);
    let isDirectoryWarned = false;
    this.directory = new TaskDirectory(store, (error) => {
      // Once: a store that is down says so on every enqueue anyway.
      if (!isDirectoryWarned) log.warn({ err: error }, 'could not read the task directory; enqueue of types this process did not register uses what it last read');
      isDirectoryWarned = true;
    });
    this.scheduler = new CronScheduler((type, payload, options) => this.enqueue(type, payload as never, options), log, this.maintenance);
  }

  /**
   * Open (and by default migrate) a store.
   * @example const mr = await Mailroom.open({ db: 'sqlite:./data/mailroom.db' });
   */
  static async open(options: MailroomOptions = {}): Promise<Mailroom> {
    // `{ database: … }` would otherwise open ./data/mailroom.db without a word.
    assertKnownOptions(options, OPEN_OPTION_KEYS, 'Mailroom.open');
    // Refuse a bad window now, not at the first mr.work().
    if (options.retention) validateRetention(options.retention);
    if (options.lockDeadlineMs !== undefined && !(typeof options.lockDeadlineMs === 'number' && options.lockDeadlineMs > 0)) {
      throw new InvalidArgumentError('lockDeadlineMs must be a number of milliseconds above 0 (Infinity: wait as long as the lock is held)');
    }
    const deliver = resolveDeliverSettings(options.endpoints);
    const portal = new PortalApi(options.portal);
    const log = options.logger ?? createLogger();
    const store =
      options.store ??
      (await openStore({
        db: options.db ?? 'sqlite:./data/mailroom.db',
        synchronous: options.synchronous,
        schema: options.schema,
        lockDeadlineMs: options.lockDeadlineMs,
      }));
    // An older schema (migrate: false) may lack the task directory's table: its read is
    // skipped, and the CLI says "run mailroom migrate" without a warning in front of it.
    let hasTaskDirectory = true;
    let hasTaskBudget = true;
    try {
      if (options.migrate !== false) await store.migrate();
      else {
        const version = await store.schemaVersion();
        hasTaskDirectory = version.database >= TASK_DIRECTORY_MIGRATION;
        hasTaskBudget = version.database >= TASK_BUDGET_MIGRATION;
      }
    } catch (error) {
      if (!options.store) await store.close().catch(() => undefined);
      throw error;
    }
    log.debug({ store: store.description }, 'mailroom opened');
    const mr = new Mailroom(store, log, options.store === undefined, options.retention ?? {}, deliver, portal, hasTaskBudget);
    if (hasTaskDirectory) {
      const loading = mr.directory.refreshIfStale(); // always stale here: the first read
      if (loading) await loading;
    }
    if (options.endpoints?.deliver === true || (options.endpoints?.deliver !== false && (await hasEndpoints(store)))) mr.startDelivering();
    return mr;
  }

  /** Register the handler and policy for a job type. */
  task<T extends string>(type: T, definition: TaskDefinition<PayloadOf<T>> | TaskHandler<PayloadOf<T>>): this {
    if (typeof definition === 'object') assertKnownOptions(definition, TASK_DEFINITION_KEYS, `task "${type}"`);
    if (this.registry.get(type) && !this.builtInTypes.has(type)) {
      // The tour's snippets, pasted one after another, do this: the second definition's
      // defaults (queue, attempts) silently replacing the first's would look like lost jobs.
      this.log.warn({ type }, 'task registered again: the new definition replaces the earlier one, policy included');
    }
    this.registry.register(type, definition);
    this.builtInTypes.delete(type);
    // Workers claim by registered types: let idle ones look again.
    for (const worker of this.workers) worker.wake();
    if (this.workers.size > 0) this.recordTasks();
    return this;
  }

  /**
   * Types you registered a handler for in this process. Workers also run the built-in
   * `deliver` task (outgoing webhooks), which is not listed unless you replaced it.
   */
  taskTypes(): string[] {
    return this.registry.types().filter((type) => !this.builtInTypes.has(type));
  }

  /** The queues this process's tasks (the built-in `deliver` one included) enqueue to unless told otherwise. */
  taskQueues(): string[] {
    return [...new Set(this.registry.types().map((type) => this.registry.get(type)!.queue ?? DEFAULT_QUEUE))];
  }

  /**
   * Store an inbound event and the jobs it fans out to in one transaction, deduped on
   * (source, deliveryId); wakes this process's workers when jobs were created. The jobs
   * are built by the same rules as `enqueue`'s (the task's queue and attempt budget).
   * @throws EventIdentityInvalidError when the delivery id or type is past the limits of
   *   `core/event-identity.ts` (the same on every store).
   */
  async ingest(params: IngestParams): Promise<EventInsertWithJobsResult> {
    this.assertOpen();
    checkEventIdentity(params.event);
    const refreshing = this.directoryReady();
    if (refreshing) await refreshing;
    // A limit key is computed from what the handler will get: the event's parsed body.
    let body: { value: unknown } | undefined;
    const eventBody = () => (body ??= { value: parseEventBody(params.event.rawBody, params.event.headers['content-type']) }).value;
    const inserts = params.jobs.map((job) => this.toInsert(job.type, EVENT_PAYLOAD, { priority: job.priority, group: job.group ?? undefined }, { isIngress: true, limitPayload: eventBody }));
    const result = await traceEnqueue('ingest', inserts, (jobs) => this.store.eventInsertWithJobs({ event: params.event, jobs }));
    if (!result.isDuplicate && result.jobs.length > 0) this.wakeWorkersFor(inserts);
    return result;
  }

  /**
   * Enqueue one job; resolves once it is committed.
   * @example await mr.enqueue('send_email', { userId: 42 }, { key: 'welcome:42' });
   */
  async enqueue<T extends string>(type: T, payload: PayloadOf<T>, options: EnqueueOptions = {}): Promise<Job<PayloadOf<T>>> {
    this.assertOpen();
    const refreshing = this.directoryReady();
    if (refreshing) await refreshing;
    const insert = this.toInsert(type, payload, options);
    const executor = options.client !== undefined ? this.executorFor(options.client) : this.store;
    const [result] = await traceEnqueue('enqueue', [insert], (jobs) => executor.jobInsertMany({ jobs }));
    if (options.client === undefined) this.wakeWorkersFor([insert]);
    return result!.job as Job<PayloadOf<T>>;
  }

  /** Enqueue several jobs, all or nothing. */
  async enqueueMany(items: readonly EnqueueManyItem[], options: { client?: unknown } = {}): Promise<Job[]> {
    this.assertOpen();
    if (!Array.isArray(items)) throw new InvalidArgumentError('enqueueMany takes an array of { type, payload, options }');
    if (items.length === 0) return [];
    const refreshing = this.directoryReady();
    if (refreshing) await refreshing;
    const inserts = items.map((item) => this.toInsert(item.type, item.payload, item.options ?? {}));
    const executor = options.client !== undefined ? this.executorFor(options.client) : this.store;
    const results = await traceEnqueue('enqueue', inserts, (jobs) => executor.jobInsertMany({ jobs }));
    if (options.client === undefined) this.wakeWorkersFor(inserts);
    return results.map((r) => r.job);
  }

  /**
   * Fan out: enqueue `children` and a batch record in one transaction (all or nothing),
   * and have the store enqueue `then` exactly once, in the same transaction as the
   * outcome that makes the last child terminal (`done` or `dead`, whichever way: a
   * failure, a cancel, a lost last attempt). With no children, `then` is enqueued at
   * once. Children and `then` take no idempotency key. See docs/job-states.md#batches.
   * @example
   * const batch = await mr.enqueueBatch(pages.map((page) => ({ type: 'render_page', payload: { reportId, page } })),
   *   { then: { type: 'assemble_report', payload: { reportId } } });
   */
  async enqueueBatch(children: readonly EnqueueManyItem[], options: EnqueueBatchOptions): Promise<EnqueuedBatch> {
    this.assertOpen();
    const refreshing = this.directoryReady();
    if (refreshing) await refreshing;
    const batch = this.toBatchInsert(children, options);
    const executor = options.client !== undefined ? this.executorFor(options.client) : this.store;
    const result = await traceEnqueue('enqueue', batch, (jobs) => executor.batchInsert(splitBatch(jobs)));
    if (options.client === undefined) this.wakeWorkersFor(batch);
    return { ...result.batch, jobs: result.jobs };
  }

  /** A batch's counts and its completion job's id and status; null for an unknown id. */
  async getBatch(id: string): Promise<Batch | null> {
    this.assertOpen();
    return this.store.batchGet({ id: String(id) });
  }

  /**
   * Publish an outgoing webhook message for a tenant: stored once (per `key`), with a
   * deliver job for each of the tenant's enabled endpoints whose filter takes `type` (and
   * a `skipped` delivery for each disabled one), in one transaction — yours with `client`
   * (PostgreSQL) or inside `mr.transaction` (`tx.publish`). A message that matches no
   * endpoint is still stored.
   * @example await mr.publish('invoice.paid', invoice, { tenant: 'acme', key: `invoice:${invoice.id}` });
   */
  async publish(type: string, payload: unknown, options: PublishOptions): Promise<PublishResult> {
    this.assertOpen();
    const executor = options.client !== undefined ? this.executorFor(options.client) : this.store;
    const result = await this.publishIn(executor, type, payload, options);
    if (options.client === undefined && result.deliveries.some((d) => d.status === 'pending')) this.wakeWorkers();
    return result;
  }

  /**
   * Run `fn` in one store transaction with your own writes (the outbox).
   * SQLite: `fn` is synchronous and gets `{ db, enqueue }`; returns fn's value.
   * PostgreSQL: `fn` is async and gets `{ client, enqueue }`; resolves to fn's value.
   */
  transaction<R>(fn: (tx: SyncTransaction & AsyncTransaction) => R): R extends Promise<unknown> ? R : R | Promise<R>;
  transaction(fn: (tx: any) => any): any {
    this.assertOpen();
    if (typeof fn !== 'function') throw new InvalidArgumentError('transaction takes a callback: mr.transaction((tx) => { … tx.enqueue(…) })');
    return this.runTransaction(fn, null);
  }

  /**
   * mr.transaction, and ctx.complete: with a `finish`, the job's outcome is written last
   * in the same transaction, fenced by its lease token, and a fence that fails rolls the
   * whole transaction back with LeaseLostError, so the caller's writes never outlive a
   * lost lease.
   */
  private runTransaction(fn: (tx: any) => any, finish: JobFinish | null): any {
    if (this.store.capabilities.syncTransactions && this.store.transactionSync) {
      this.syncDirectory();
      const result = this.store.transactionSync((tx) => {
        const value = fn({
          db: tx.db,
          enqueue: (type: string, payload: unknown, options: EnqueueOptions = {}) =>
            traceEnqueue('enqueue', [this.toInsert(type, payload, options)], (jobs) => tx.jobInsertMany({ jobs })[0]!.job),
          enqueueBatch: (children: readonly EnqueueManyItem[], options: EnqueueBatchOptions) => {
            const result = traceEnqueue('enqueue', this.toBatchInsert(children, options), (jobs) => tx.batchInsert(splitBatch(jobs)));
            return { ...result.batch, jobs: result.jobs };
          },
          publish: (type: string, payload: unknown, options: PublishOptions) => this.publishIn(tx, type, payload, options),
        });
        if (finish && tx.jobFinishMany({ finishes: [finish] }).length === 0) throw new LeaseLostError(finish.id);
        return value;
      });
      this.wakeWorkers();
      return result;
    }
    if (this.store.capabilities.asyncTransactions && this.store.transaction) {
      // A stale directory is read before the transaction takes a connection (see refreshLater inside).
      return Promise.resolve(this.directory.refreshIfStale())
        .then(() => this.store.transaction!(async (tx) => {
          const value = await fn({
            client: tx.client,
            enqueue: async (type: string, payload: unknown, options: EnqueueOptions = {}) => {
              this.directory.refreshLater(); // for the next enqueue: awaited here, it could wait for a pool connection these transactions hold
              return (await traceEnqueue('enqueue', [this.toInsert(type, payload, options)], (jobs) => tx.jobInsertMany({ jobs })))[0]!.job;
            },
            enqueueBatch: async (children: readonly EnqueueManyItem[], options: EnqueueBatchOptions) => {
              this.directory.refreshLater(); // for the next enqueue: awaited here, it could wait for a pool connection these transactions hold
              const result = await traceEnqueue('enqueue', this.toBatchInsert(children, options), (jobs) => tx.batchInsert(splitBatch(jobs)));
              return { ...result.batch, jobs: result.jobs };
            },
            publish: (type: string, payload: unknown, options: PublishOptions) => this.publishIn(tx, type, payload, options),
          });
          if (finish && (await tx.jobFinishMany({ finishes: [finish] })).length === 0) throw new LeaseLostError(finish.id);
          return value;
        }))
        .then((value) => {
          this.wakeWorkers();
          return value;
        });
    }
    throw new UnsupportedError('This store does not support transactions.');
  }

  /**
   * Enqueue `type` at every slot of a cron schedule, exactly once per slot however many
   * processes run the same schedule (the slot is the job's idempotency key). Schedules
   * fire in processes that run a worker (`mr.work()`); a slot missed while none ran is
   * skipped, not caught up.
   * @example mr.schedule('nightly-report', { cron: '0 3 * * *', type: 'report', timezone: 'Europe/Berlin' });
   */
  schedule(name: string, options: ScheduleOptions): this {
    this.assertOpen();
    this.scheduler.add(name, options);
    return this;
  }

  /** Start a worker now; call again for other queues or concurrency. The first one also starts retention. */
  work(options: WorkerOptions = {}): Worker {
    this.assertOpen();
    assertKnownOptions(options, WORKER_OPTION_KEYS, 'work');
    this.scheduler.start();
    if (this.retention !== false && !this.isRetentionStarted) {
      startRetention(this, this.retention, this.maintenance);
      this.isRetentionStarted = true;
    }
    const onStopped = (stopped: Worker) => {
      this.workers.delete(stopped);
      signalClosed(stopped);
    };
    const worker = new Worker(
      {
        store: this.store,
        registry: this.registry,
        log: this.log,
        maintenance: this.maintenance,
        onStopped,
        completeInTransaction: (fn, finish) => this.runTransaction(fn, finish),
        enqueueBatch: (children, options) => this.enqueueBatch(children, options),
      },
      options,
    );
    this.workers.add(worker);
    this.recordTasks();
    signalOpened('worker', worker, `worker ${worker.id}`);
    return worker.start();
  }

  async getJob(id: string): Promise<JobDetail | null> {
    this.assertOpen();
    return this.store.jobGet({ id: String(id) });
  }

  async listJobs(options: ListJobsOptions = {}): Promise<Job[]> {
    this.assertOpen();
    assertKnownOptions(options, LIST_JOBS_KEYS, 'listJobs');
    if (options.status !== undefined && !JOB_STATUSES.includes(options.status)) {
      throw new InvalidArgumentError(`status must be one of ${JOB_STATUSES.join(', ')}`);
    }
    return this.store.jobList(options);
  }

  /**
   * Stored webhook events, without headers or body, each with how many jobs it fanned
   * out to (an event no task took, such as a filtered `ping`, shows 0).
   * @example await mr.listEvents({ source: 'github', type: 'ping', descending: true, limit: 20 });
   */
  async listEvents(options: ListEventsOptions = {}): Promise<EventSummary[]> {
    this.assertOpen();
    return this.store.eventList(options);
  }

  /** One stored event with its headers (signatures were never stored) and byte-exact body; null when unknown. */
  async getEvent(id: string): Promise<InboundEvent | null> {
    this.assertOpen();
    return this.store.eventGet({ id: String(id) });
  }

  /**
   * Replay dead jobs (or, with force, done ones) with a fresh attempt budget; history is
   * kept and the replay recorded.
   * @example await mr.replay({ status: 'dead', type: 'send_email' }, { reason: 'fixed template' });
   */
  async replay(target: ReplayTarget | string, options: ReplayOptions = {}): Promise<ReplayResult> {
    this.assertOpen();
    // A bare id, as retryNow and cancel take one.
    if (typeof target === 'string' || typeof target === 'number') target = { id: String(target) };
    if (typeof target !== 'object' || target === null) throw new InvalidArgumentError('replay takes a job id, { id }, { ids } or a filter { status, … }');
    if (!('id' in target) && !('ids' in target)) assertKnownOptions(target, REPLAY_FILTER_KEYS, 'replay filter');
    assertKnownOptions(options, REPLAY_OPTION_KEYS, 'replay');
    if (options.maxAttempts !== undefined) assertPositiveInteger(options.maxAttempts, 'maxAttempts');
    const common = {
      reason: options.reason ?? null,
      by: options.by ?? null,
      force: options.force ?? false,
      includeCancelled: options.includeCancelled ?? false,
      maxAttempts: options.maxAttempts,
    };
    let ids: string[];
    if ('id' in target) {
      const job = await this.store.jobGet({ id: String(target.id) });
      if (!job) throw new JobNotFoundError(String(target.id));
      if (job.status === 'done' && !options.force) {
        throw new JobStateError(job.id, 'done', 'replay', 'Pass { force: true } to run it again (its side effects repeat).');
      }
      if (job.status === 'pending') throw new JobStateError(job.id, 'pending', 'replay', 'It runs on its own; to run it now, use retryNow.');
      if (job.status === 'running') throw new JobStateError(job.id, 'running', 'replay');
      ids = await this.store.jobReplay({ ...common, ids: [job.id], includeCancelled: true });
    } else if ('ids' in target) {
      ids = await this.store.jobReplay({ ...common, ids: target.ids.map(String) });
    } else {
      if (target.status === 'done' && !options.force) throw new InvalidArgumentError('replaying done jobs needs { force: true }');
      ids = await this.store.jobReplay({
        ...common,
        force: target.status === 'done' || common.force,
        filter: {
          status: target.status,
          type: target.type,
          source: target.source,
          eventId: target.eventId,
          errorContains: target.errorContains,
        },
      });
    }
    if (ids.length > 0) {
      this.log.info({ count: ids.length, reason: options.reason, by: options.by }, 'jobs replayed');
      this.wakeWorkers();
    }
    return { count: ids.length, ids };
  }

  /**
   * Run now: a pending job that waits for its retry or its delay becomes due at once, with
   * its attempts and history untouched (what an operator does when the endpoint is back).
   * Group order still holds: a grouped job runs when its group's earlier jobs have.
   * One id (waiting for a retry or a delay), or every pending job matching a filter that
   * waits for a retry (with `includeDelayed`, delayed ones too). A job already due is left
   * as it is and not counted.
   * @throws JobNotFoundError for an unknown id; JobStateError when that job is not pending
   * @example await mr.retryNow('4711'); await mr.retryNow({ type: 'forward', errorContains: 'ECONNREFUSED' });
   */
  async retryNow(target: string | RetryNowFilter): Promise<RetryNowResult> {
    this.assertOpen();
    let ids: string[];
    if (typeof target === 'string' || typeof target === 'number') {
      const id = String(target);
      ids = await this.store.jobRetryNow({ ids: [id] });
      if (ids.length === 0) {
        const job = await this.store.jobGet({ id });
        if (!job) throw new JobNotFoundError(id);
        if (job.status !== 'pending') {
          const advice = job.status === 'running' ? undefined : 'Replay it to run it again.';
          throw new JobStateError(job.id, job.status, 'retry', advice);
        }
      }
    } else {
      if (typeof target !== 'object' || target === null) throw new InvalidArgumentError('retryNow takes a job id or a filter');
      assertKnownOptions(target, RETRY_NOW_FILTER_KEYS, 'retryNow filter');
      ids = await this.store.jobRetryNow({
        filter: { type: target.type, queue: target.queue, source: target.source, eventId: target.eventId, errorContains: target.errorContains },
        includeDelayed: target.includeDelayed === true,
      });
    }
    if (ids.length > 0) {
      this.log.info({ count: ids.length, jobIds: ids.slice(0, 100) }, 'jobs made due now');
      this.wakeWorkers();
    }
    return { count: ids.length, ids };
  }

  /** Cancel a pending job: it becomes dead with reason 'cancelled'. */
  async cancel(id: string, options: { reason?: string } = {}): Promise<Job> {
    this.assertOpen();
    const cancelled = await this.store.jobCancel({ id: String(id), reason: options.reason });
    if (cancelled) {
      this.log.info({ jobId: cancelled.id, type: cancelled.type }, 'job cancelled');
      return cancelled;
    }
    const job = await this.store.jobGet({ id: String(id) });
    if (!job) throw new JobNotFoundError(String(id));
    const advice: Partial<Record<string, string>> = {
      running: 'Only a pending job can be cancelled; if this run fails and the job waits for a retry, cancel it then.',
      dead: 'It will not run again unless replayed.',
      done: 'It has finished.',
    };
    throw new JobStateError(job.id, job.status, 'cancel', advice[job.status]);
  }

  /** Delete done jobs (and unreferenced events) past the retention window. */
  async purge(options: PurgeOptions = {}): Promise<{ jobs: number; events: number }> {
    this.assertOpen();
    const olderThanMs = options.olderThanMs ?? DEFAULT_DONE_RETENTION_MS;
    if (!(olderThanMs >= 0)) throw new InvalidArgumentError('olderThanMs must be >= 0');
    return this.store.jobPurge({
      doneOlderThanMs: olderThanMs,
      deadOlderThanMs: options.deadOlderThanMs,
      // Dedupe receipts live at least as long as the done jobs they produced.
      eventsOlderThanMs: Math.max(olderThanMs, options.deadOlderThanMs ?? 0),
    });
  }

  /** Counts by status and queue, and the age of the oldest due pending job. */
  async stats(): Promise<MailroomStats> {
    this.assertOpen();
    const raw = await this.store.jobStats({});
    const byStatus: StatusCounts = emptyStatusCounts();
    for (const counts of Object.values(raw.byQueue)) {
      for (const status of JOB_STATUSES) byStatus[status] += counts[status];
    }
    const oldestPendingAgeMsByQueue: Record<string, number> = {};
    let oldestPendingAgeMs = 0;
    for (const [queue, at] of Object.entries(raw.oldestDuePendingAt)) {
      const age = Math.max(0, raw.now.getTime() - at.getTime());
      oldestPendingAgeMsByQueue[queue] = age;
      oldestPendingAgeMs = Math.max(oldestPendingAgeMs, age);
    }
    return { byStatus, byQueue: raw.byQueue, oldestPendingAgeMs, oldestPendingAgeMsByQueue, paused: raw.paused, durability: this.store.durability };
  }

  /**
   * Pause a queue: no worker anywhere claims its jobs until it is resumed. Running jobs
   * finish; enqueue and ingress keep accepting. Pausing a paused queue updates its reason
   * when given one, and keeps the reason it has otherwise.
   * @returns true when this call paused it
   * @example await mr.pauseQueue('email', { reason: 'provider outage' });
   */
  async pauseQueue(queue: string, options: PauseQueueOptions = {}): Promise<boolean> {
    this.assertOpen();
    assertQueueName(queue);
    assertKnownOptions(options, PAUSE_OPTION_KEYS, 'pauseQueue');
    const paused = await this.store.queuePause({ queue, reason: options.reason ?? null });
    for (const worker of this.workers) worker.notePause(queue, true);
    return paused;
  }

  /** Resume a paused queue; its waiting jobs become claimable at once. @returns true when it was paused */
  async resumeQueue(queue: string): Promise<boolean> {
    this.assertOpen();
    assertQueueName(queue);
    const wasPaused = await this.store.queueResume({ queue });
    for (const worker of this.workers) worker.notePause(queue, false);
    if (wasPaused) this.wakeWorkers();
    return wasPaused;
  }

  /** Stop workers (gracefully, within `timeoutMs`) and close the store if Mailroom opened it. */
  close(options: { timeoutMs?: number } = {}): Promise<void> {
    // A second call waits for the same close: resolving at once would tell its caller the
    // workers had stopped and the store was closed while they were still stopping.
    return (this.closing ??= this.closeOnce(options));
  }

  private async closeOnce(options: { timeoutMs?: number }): Promise<void> {
    this.isClosed = true;
    this.scheduler.stop();
    // Cron, retention and the workers' rescue sweeps: no new runs; a purge or sweep in
    // flight finishes before the workers stop and the store closes.
    await this.maintenance.stop();
    await Promise.all([...this.workers].map((worker) => worker.stop({ timeoutMs: options.timeoutMs ?? 10_000 })));
    // Task records and directory reads in flight finish before the store closes under them.
    await Promise.all([...this.taskRecords, this.directory.settled()]);
    if (this.ownsStore) await this.store.close();
  }

  // ---- internals ----

  /**
   * The one place a job to insert is built, for enqueue, enqueueMany, a transaction's
   * enqueue and ingest: options are checked, and what they leave out comes from the task's
   * policy, then the defaults.
   */
  private toInsert(type: string, payload: unknown, options: EnqueueOptions, source: InsertSource = {}): JobInsert {
    if (typeof type !== 'string' || type.trim() === '') throw new InvalidArgumentError('job type must be a non-empty string');
    assertKnownOptions(options, ENQUEUE_OPTION_KEYS, () => `enqueue of "${type}"`);
    const task = this.registry.get(type);
    // A type this process did not register: what its worker recorded (queue, keyed, maxAttempts).
    const recorded = task ? undefined : this.directory.get(type);
    let payloadJson: string | undefined;
    try {
      payloadJson = JSON.stringify(payload === undefined ? null : payload);
    } catch (cause) {
      throw new MailroomError('MR_ERR_INVALID_ARGUMENT', `payload of "${type}" is not JSON-serialisable: ${(cause as Error).message}`, { cause });
    }
    if (payloadJson === undefined) throw new InvalidArgumentError(`payload of "${type}" is not JSON-serialisable`);
    assertNoNul(type, 'job type');
    const priority = options.priority ?? 0;
    if (!Number.isInteger(priority)) throw new InvalidArgumentError('priority must be an integer');
    // PostgreSQL keeps priority as a 4-byte integer: the same bounds on both stores.
    if (priority < MIN_PRIORITY || priority > MAX_PRIORITY) throw new InvalidArgumentError(`priority must be between ${MIN_PRIORITY} and ${MAX_PRIORITY}`);
    const maxAttempts = options.maxAttempts ?? task?.maxAttempts ?? recorded?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    assertPositiveInteger(maxAttempts, 'maxAttempts');
    if (options.runAt !== undefined && (!(options.runAt instanceof Date) || Number.isNaN(options.runAt.getTime()))) {
      throw new InvalidArgumentError(typeof options.runAt === 'string' ? 'runAt must be a Date, not a string: pass new Date(text)' : 'runAt must be a valid Date');
    }
    // Both would leave one silently ignored (the store takes runAt).
    if (options.runAt !== undefined && options.delayMs !== undefined) throw new InvalidArgumentError('give runAt or delayMs, not both');
    const delayMs = options.delayMs ?? 0;
    if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) throw new InvalidArgumentError('delayMs must be a number >= 0');
    const queue = options.queue ?? task?.queue ?? recorded?.queue ?? DEFAULT_QUEUE;
    if (recorded?.keyed) this.withoutLimitKey(type, source.isIngress === true);
    assertQueueName(queue);
    for (const [name, value] of [['key', options.key], ['group', options.group]] as const) {
      if (value !== undefined && (typeof value !== 'string' || value === '')) throw new InvalidArgumentError(`${name} must be a non-empty string`);
      if (value !== undefined) assertNoNul(value, name);
    }
    // After every check: a refused enqueue does not use up the type's one warning.
    if (!task && !recorded && options.queue === undefined) this.unknownType(type);
    return {
      type,
      payloadJson,
      queue,
      priority,
      maxAttempts,
      runAt: options.runAt ?? null,
      delayMs,
      key: options.key ?? null,
      group: options.group ?? null,
      ...(task?.limitKey ? this.limitKeyField(type, task.limitKey, payload, source) : {}),
    };
  }

  /**
   * What an enqueue waits for before it reads the task directory: a stale snapshot's read
   * on PostgreSQL; nothing on SQLite, where the snapshot is read synchronously. There an
   * enqueue must reach its insert without awaiting anything, so that
   * `mr.enqueue` inside the caller's own `db.transaction` (a shared Database) joins it and
   * rolls back with it; an await first would insert after that transaction had ended.
   */
  private directoryReady(): Promise<void> | undefined {
    if (this.store.taskListSync) {
      this.syncDirectory();
      return undefined;
    }
    return this.directory.refreshIfStale();
  }

  /** SQLite: a stale directory read synchronously, before a synchronous transaction or an insert. */
  private syncDirectory(): void {
    if (this.store.taskListSync) this.directory.refreshSyncIfStale(() => this.store.taskListSync!());
  }

  /**
   * The job's limit key from its task's `limits.key`. An enqueue whose key function throws
   * or returns no string is refused; a webhook's job is stored unkeyed instead (with a
   * warning): the event is signed and stored-or-refused as a whole, and a refusal no retry
   * can fix (a 400 or a 503) would lose it.
   */
  private limitKeyField(type: string, key: (payload: unknown) => string | number, payload: unknown, source: InsertSource): { limitKey?: string } {
    try {
      return { limitKey: limitKeyOf(type, key, source.limitPayload ? source.limitPayload() : payload) };
    } catch (error) {
      if (!source.isIngress) throw error;
      if (!this.unkeyableTypes.has(type)) {
        this.unkeyableTypes.add(type);
        this.log.warn({ type, error: (error as Error).message }, 'webhook jobs of this type are stored without a limit key: limits.key could not key an event (said once per type)');
      }
      return {};
    }
  }

  /**
   * A job of a type with per-key limits that this process cannot key: an API enqueue is
   * refused (the caller can register the task); ingress stores it without a key, since
   * refusing a webhook could lose it (not every provider redelivers), and warns once.
   */
  private withoutLimitKey(type: string, isIngress: boolean): void {
    if (!isIngress) throw new LimitKeyUnknownError(type);
    if (this.keylessTypes.has(type)) return;
    this.keylessTypes.add(type);
    this.log.warn(
      { type },
      'webhook jobs of this type are stored without a limit key: its worker has per-key limits, but this process has not registered the task; they share one key until it does',
    );
  }

  /**
   * A type neither registered here nor recorded by any worker: its jobs go to the default
   * queue with the default budget, where a worker serving only its task's queue never
   * sees them. Said once per type; the directory is read every half second for the next 30 s.
   */
  private unknownType(type: string): void {
    if (this.unknownTypes.has(type)) return;
    this.unknownTypes.add(type);
    this.log.warn(
      { type, queue: DEFAULT_QUEUE },
      "no worker has recorded this job type and this process did not register it: its jobs go to the default queue with the default attempts until one does; register the task in this process too (mr.task, or the CLI's --config) if its worker serves another queue, and check the type's spelling",
    );
  }

  /** Record this process's task types in the store's task directory, for processes that enqueue them without registering them. */
  private recordTasks(): void {
    const tasks = this.taskTypes().map((type) => {
      const task = this.registry.get(type)!;
      return { type, queue: task.queue ?? DEFAULT_QUEUE, keyed: task.keyed, maxAttempts: task.maxAttempts ?? null };
    });
    // Each mr.work() and each mr.task() beside running workers asks; a process that starts
    // several workers (serve starts two) writes the same rows once.
    const signature = JSON.stringify(tasks);
    if (signature === this.recordedTasks) return;
    this.recordedTasks = signature;
    const recording = this.store.taskRecord({ tasks, withBudget: this.hasTaskBudget }).catch((error: unknown) => {
      if (this.recordedTasks === signature) this.recordedTasks = null; // the next ask tries again
      this.log.warn({ err: error }, 'could not record task types in the store; other processes that enqueue them without registering them use the default queue');
    });
    this.taskRecords.add(recording);
    void recording.finally(() => this.taskRecords.delete(recording));
  }

  /**
   * A batch's jobs to insert, built by toInsert's rules: the children, then its completion
   * job last (splitBatch takes them apart after tracing). No keys: a child whose key
   * already existed would be a job the batch does not own, and the completion is once per
   * batch by construction.
   */
  private toBatchInsert(children: readonly EnqueueManyItem[], options: EnqueueBatchOptions): JobInsert[] {
    if (!Array.isArray(children)) throw new InvalidArgumentError('enqueueBatch takes an array of { type, payload, options } children');
    const then = options?.then;
    if (typeof then !== 'object' || then === null) throw new InvalidArgumentError('enqueueBatch needs { then: { type, payload } }: the completion job');
    assertKnownOptions(options, BATCH_OPTION_KEYS, 'enqueueBatch');
    for (const name of ['key', 'runAt', 'group'] as const) {
      if ((then as Record<string, unknown>)[name] !== undefined) {
        throw new InvalidArgumentError(`then.${name} is not supported: the completion job is enqueued once, when the last child ends (use then.delayMs to wait after that)`);
      }
    }
    // Before toInsert's check, which would list options (key, runAt, group) that then refuses.
    assertKnownOptions(then, BATCH_THEN_KEYS, 'enqueueBatch then');
    const inserts = children.map((child, index) => {
      if (child?.options?.key !== undefined) throw new InvalidArgumentError(`children[${index}].options.key is not supported: a batch's children take no idempotency key`);
      return this.toInsert(child?.type, child?.payload, child?.options ?? {});
    });
    const { type, payload, ...thenOptions } = then;
    inserts.push(this.toInsert(type, payload, thenOptions));
    return inserts;
  }

  /** Publish on a transaction's executor (sync on SQLite, async on PostgreSQL), traced like any enqueue. */
  private publishIn<R extends PublishResult | Promise<PublishResult>>(
    tx: { messagePublish(params: MessagePublishParams): R },
    type: string,
    payload: unknown,
    options: PublishOptions,
  ): R {
    const params = this.publishParams(type, payload, options);
    return traceEnqueue('publish', [params.job], ([job]) => tx.messagePublish({ ...params, job: job! }));
  }

  /** A checked publish: tenant, type, key and payload, and the deliver job's policy. */
  private publishParams(type: string, payload: unknown, options: PublishOptions): MessagePublishParams {
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('publish needs { tenant }');
    assertKnownOptions(options, PUBLISH_OPTION_KEYS, 'publish');
    return {
      tenant: checkText(options.tenant, 'tenant'),
      type: checkText(type, 'message type'),
      payloadJson: payloadJsonOf(payload, `payload of "${type}"`),
      key: options.key === undefined ? null : checkText(options.key, 'key'),
      job: this.deliverJob(),
    };
  }

  /** The deliver job as the deliver task's policy makes it; the store sets each one's payload and limit key. */
  private deliverJob(): JobInsert {
    this.startDelivering();
    return this.toInsert(DELIVER_TASK, null, {}, { limitPayload: () => ({ endpointId: '' }) });
  }

  /**
   * Register the built-in `deliver` task, once, unless the user registered their own. Not
   * at every open: its per-endpoint limits put every claim of this process on the limited
   * path (on PostgreSQL, an advisory lock per claim), a cost a process that never sends
   * webhooks should not pay. So it starts when the store has an endpoint at open, when
   * this process adds one or publishes, or when `endpoints.deliver` says so.
   */
  /** Whether this process's workers run the built-in `deliver` task (see startDelivering). */
  get isDelivering(): boolean {
    return this.registry.get(DELIVER_TASK) !== undefined;
  }

  startDelivering(): void {
    if (this.registry.get(DELIVER_TASK)) return;
    this.registry.register(
      DELIVER_TASK,
      createDeliverTask({
        store: this.store,
        settings: this.deliverSettings,
        log: this.log,
        successWithDone: this.store.capabilities.roundTrips,
        onEndpointDisabled: (endpointId, cause) => this.outgoingEvents.emit('endpointDisabled', endpointId, cause),
      }),
    );
    this.builtInTypes.add(DELIVER_TASK);
    this.wakeWorkers();
  }

  private executorFor(client: unknown): StoreExecutor {
    if (!this.store.capabilities.asyncTransactions || !this.store.fromClient) {
      throw new UnsupportedError(
        'enqueue({ client }) needs a store with async transactions (PostgreSQL); on SQLite use mr.transaction(tx => tx.enqueue(...)) or share your Database via Mailroom.open({ db })',
      );
    }
    return this.store.fromClient(client);
  }

  private wakeWorkers(): void {
    for (const worker of this.workers) worker.wake();
  }

  /**
   * Wake the workers for new jobs only when this process has a handler for one of them: a
   * claim for types nothing here runs finds nothing, and `serve` ingesting for a separate
   * worker would pay one per webhook (a limited claim, with `deliver` registered). A
   * worker that registers a handler later finds them at its next poll.
   */
  private wakeWorkersFor(jobs: readonly { readonly type: string }[]): void {
    if (this.workers.size > 0 && jobs.some((job) => this.registry.get(job.type) !== undefined)) this.wakeWorkers();
  }

  private assertOpen(): void {
    if (this.isClosed) throw new ClosedError();
  }
}

/** The children and the completion job of toBatchInsert, as the store takes them. */
function splitBatch(jobs: readonly JobInsert[]): BatchInsertParams {
  return { children: jobs.slice(0, -1), then: jobs[jobs.length - 1]! };
}

export type { JobStatus };
