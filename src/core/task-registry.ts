// Task definitions by type: the handler plus its retry policy and queue. Payload types are
// opt-in through declaration merging on `Tasks`, so unknown types stay `unknown`.

import type { Batch, InboundEvent, Job } from './types.js';
import type { AsyncTransaction, EnqueueBatchOptions, EnqueueManyItem, EnqueuedBatch, SyncTransaction } from '../mailroom.js';
import type { Logger } from '../log.js';
import { resolveRetryPolicy } from './retry-policy.js';
import type { RetryPolicy, RetryPolicyOptions } from './retry-policy.js';
import { InvalidArgumentError } from './errors.js';
import { assertKnownOptions, optionKeys } from './known-options.js';
import type { LimitSet, RateLimit, TypeLimits } from '../store/limits.js';
import type { DeliveredAttempt } from '../store/outgoing-store.js';

/**
 * Declare payload types per task type to type `enqueue` and `run`:
 * @example
 * declare module 'mailroom' { interface Tasks { send_email: { userId: number } } }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface Tasks {}

export type PayloadOf<T extends string> = T extends keyof Tasks ? Tasks[T] : unknown;

/**
 * What a completion job's handler sees of its batch: the counts when it started, and its
 * children in id order, read a page at a time (a batch of 100,000 children is never held
 * in memory at once). `for await (const child of ctx.batch)` walks the children.
 */
export interface BatchContext extends Pick<Batch, 'id' | 'total' | 'done' | 'dead'> {
  /** The children as they are now (status, result, lastError, deadReason, payload), in id order. */
  children(options?: { readonly pageSize?: number }): AsyncIterableIterator<Job>;
  [Symbol.asyncIterator](): AsyncIterableIterator<Job>;
}

/**
 * Where Mailroom's own deliver task hands the worker its success, to be written with the
 * job's `done` (JobFinish `delivered`) instead of in a store call of its own that the
 * handler would wait for. A key of the context that TaskContext's type leaves out: it is
 * for the deliver task, not for handlers of yours.
 */
export const DELIVERED_WITH_DONE = Symbol('mailroom.deliveredWithDone');

/** A context as the worker builds it, with the deliver task's hand-off. */
export interface WorkerTaskContext<P = unknown> extends TaskContext<P> {
  readonly [DELIVERED_WITH_DONE]?: (delivered: DeliveredAttempt) => void;
}

/** What a handler gets besides its payload. */
export interface TaskContext<P = unknown> {
  readonly job: Job<P>;
  /** This attempt's number, 1-based, counted since the last replay. */
  readonly attempt: number;
  /** Aborted on timeout, lost lease or shutdown; a handler should stop when it fires. */
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** The inbound webhook this job came from, when it came from one. */
  readonly event: InboundEvent | null;
  /** Ask for the lease to run at least `ms` more from now (the worker also extends it on its own). */
  extendLease(ms: number): Promise<void>;
  /**
   * Keep small structured facts with this attempt (JSON, at most 8 KiB), written with its
   * outcome whatever it is, and shown in the job's history. The last call wins; undefined
   * clears. Throws MR_ERR_RESULT_UNSTORABLE for a value that is not JSON or too large.
   * @example ctx.setDetails({ status: res.status, messageId })
   */
  setDetails(details: unknown): void;
  /**
   * Report how far the job is (0…1) and, optionally, what it is doing. Stored with the job
   * (getJob, `mailroom job`, the dashboard), fenced by its lease, coalesced to a few
   * writes a second however often it is called.
   * @example ctx.progress(page / pages, `rendered page ${page} of ${pages}`)
   */
  progress(fraction: number, note?: string): void;
  /**
   * Commit your own writes and this job's `done` in one transaction, fenced by the job's
   * lease: if the lease was lost, nothing of it commits and this throws LeaseLostError;
   * once it commits, the job never runs again (exactly once for effects in the same
   * database). SQLite: `fn` is synchronous and gets `{ db, enqueue }` on Mailroom's
   * connection; PostgreSQL: `fn` is async and gets `{ client, enqueue }`. Returns fn's
   * value. Afterwards the handler's return value is the job's result; a throw after it
   * changes nothing. Once per attempt.
   * @example ctx.complete((tx) => { tx.db.prepare('UPDATE orders SET paid = 1 WHERE id = ?').run(id); })
   */
  complete<R>(fn: (tx: SyncTransaction & AsyncTransaction) => R): R;
  /**
   * The batch this job completes (the `then` of mr.enqueueBatch); null for every other
   * job. Read when the attempt starts.
   * @example for await (const page of ctx.batch!) if (page.status === 'done') pages.push(page.result);
   */
  readonly batch: BatchContext | null;
  /**
   * mr.enqueueBatch from a handler: fan out from this job. It commits on its own, like
   * mr.enqueue; a retry of this job enqueues another batch, so enqueue it as the last
   * step, or inside ctx.complete (`tx.enqueueBatch`) to tie it to this job's `done`.
   */
  enqueueBatch(children: readonly EnqueueManyItem[], options: EnqueueBatchOptions): Promise<EnqueuedBatch>;
}

export type TaskHandler<P = unknown> = (payload: P, ctx: TaskContext<P>) => unknown | Promise<unknown>;

/**
 * Limits of a task type, enforced by the store in every claim, across every worker,
 * process and machine (SPEC §3). A job over a limit stays pending, uncharged.
 * @example { concurrency: 20, key: (p) => p.provider, perKey: { rate: { limit: 10, intervalMs: 1_000 } } }
 */
export interface TaskLimits<P = unknown> extends LimitSet {
  /** The limit key of a job, from its payload at enqueue (a webhook's job: the event's parsed body). */
  readonly key?: (payload: P) => string | number;
  /** Limits for each key on its own (at most N running, or N starts per interval, per key). */
  readonly perKey?: LimitSet;
}

export interface TaskDefinition<P = unknown> extends RetryPolicyOptions {
  readonly run: TaskHandler<P>;
  /** Queue this type's jobs go to unless enqueue says otherwise. @default 'default' */
  readonly queue?: string;
  readonly limits?: TaskLimits<P>;
}

/** The keys a task definition takes (`mr.task`, a module task's default export); the compiler keeps them in step with the type. */
export const TASK_DEFINITION_KEYS = optionKeys<TaskDefinition>()({
  run: true,
  queue: true,
  limits: true,
  maxAttempts: true,
  timeoutMs: true,
  backoff: true,
  retryScheduleMs: true,
  maxSnoozes: true,
  maxResultBytes: true,
});

/** The keys of `limits`, of `limits.perKey`, and of a rate: a misspelt `concurency` would be no limit at all. */
const TASK_LIMITS_KEYS = optionKeys<TaskLimits>()({ concurrency: true, rate: true, key: true, perKey: true });
const LIMIT_SET_KEYS = optionKeys<LimitSet>()({ concurrency: true, rate: true });
const RATE_KEYS = optionKeys<RateLimit>()({ limit: true, intervalMs: true });

export interface RegisteredTask {
  readonly type: string;
  readonly run: TaskHandler<any>;
  readonly queue: string | undefined;
  readonly policy: RetryPolicy;
  /** Options as given (for enqueue-time resolution of maxAttempts). */
  readonly maxAttempts: number | undefined;
  /** The limits the store enforces on claims of this type; undefined: none. */
  readonly limits: TypeLimits | undefined;
  /** The limit key of a job of this type, from its payload; undefined: no key. */
  readonly limitKey: ((payload: unknown) => string | number) | undefined;
  /** Per-key limits that need limitKey at enqueue (what the task directory records). */
  readonly keyed: boolean;
}

export class TaskRegistry {
  private readonly tasks = new Map<string, RegisteredTask>();
  /** limits(), kept until the next register(): every claim asks for it. */
  private limitsCache: TypeLimits[] | null = null;

  register<P>(type: string, definition: TaskDefinition<P> | TaskHandler<P>): RegisteredTask {
    if (typeof type !== 'string' || type.trim() === '') throw new InvalidArgumentError('task type must be a non-empty string');
    const def: TaskDefinition<P> = typeof definition === 'function' ? { run: definition } : definition;
    if (!def || typeof def.run !== 'function') throw new InvalidArgumentError(`task "${type}" needs a run(payload, ctx) function`);
    const task: RegisteredTask = {
      type,
      run: def.run as TaskHandler<any>,
      queue: def.queue,
      policy: resolveRetryPolicy(def),
      maxAttempts: def.maxAttempts,
      limits: def.limits ? resolveLimits(type, def.limits) : undefined,
      limitKey: def.limits?.key as ((payload: unknown) => string | number) | undefined,
      keyed: def.limits?.perKey !== undefined,
    };
    this.tasks.set(type, task);
    this.limitsCache = null;
    return task;
  }

  get(type: string): RegisteredTask | undefined {
    return this.tasks.get(type);
  }

  types(): string[] {
    return [...this.tasks.keys()];
  }

  /** The limits of every limited type, for claims (empty when none is limited). */
  limits(): TypeLimits[] {
    return (this.limitsCache ??= [...this.tasks.values()].flatMap((task) => (task.limits ? [task.limits] : [])));
  }
}

/** Checks a task's limits and keeps the part the store enforces. */
function resolveLimits(type: string, limits: TaskLimits<any>): TypeLimits | undefined {
  if (typeof limits !== 'object' || limits === null) throw new InvalidArgumentError(`limits of "${type}" must be an object`);
  assertKnownOptions(limits, TASK_LIMITS_KEYS, () => `limits of "${type}"`);
  if (limits.key !== undefined && typeof limits.key !== 'function') throw new InvalidArgumentError(`limits.key of "${type}" must be a function of the payload`);
  // Without a key every job would share one: perKey would be a second type-wide limit.
  if (limits.perKey !== undefined && limits.key === undefined) {
    throw new InvalidArgumentError(`limits.perKey of "${type}" needs limits.key: a function of the payload that names each job's key`);
  }
  checkLimitSet(limits, `limits of "${type}"`);
  if (limits.perKey !== undefined) {
    assertKnownOptions(limits.perKey, LIMIT_SET_KEYS, () => `limits.perKey of "${type}"`);
    checkLimitSet(limits.perKey, `limits.perKey of "${type}"`);
  }
  const resolved: TypeLimits = {
    type,
    ...(limits.concurrency !== undefined ? { concurrency: limits.concurrency } : {}),
    ...(limits.rate !== undefined ? { rate: { limit: limits.rate.limit, intervalMs: limits.rate.intervalMs } } : {}),
    ...(limits.perKey !== undefined ? { perKey: { ...limits.perKey } } : {}),
  };
  const isLimited = resolved.concurrency !== undefined || resolved.rate !== undefined || resolved.perKey?.concurrency !== undefined || resolved.perKey?.rate !== undefined;
  return isLimited ? resolved : undefined;
}

function checkLimitSet(set: LimitSet, what: string): void {
  if (typeof set !== 'object' || set === null) throw new InvalidArgumentError(`${what} must be an object`);
  if (set.rate !== undefined) assertKnownOptions(set.rate, RATE_KEYS, `${what}: rate`);
  if (set.concurrency !== undefined && !(Number.isInteger(set.concurrency) && set.concurrency >= 1)) {
    throw new InvalidArgumentError(`${what}: concurrency must be a whole number >= 1`);
  }
  if (set.rate !== undefined) {
    const { limit, intervalMs } = set.rate ?? {};
    if (!(Number.isInteger(limit) && limit >= 1) || !(Number.isInteger(intervalMs) && intervalMs >= 1)) {
      throw new InvalidArgumentError(`${what}: rate needs { limit, intervalMs }, whole numbers >= 1`);
    }
  }
}
