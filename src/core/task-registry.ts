// Task definitions by type: the handler plus its retry policy and queue. Payload types are
// opt-in through declaration merging on `Tasks`, so unknown types stay `unknown`.

import type { InboundEvent, Job } from './types.js';
import type { AsyncTransaction, SyncTransaction } from '../mailroom.js';
import type { Logger } from '../log.js';
import { resolveRetryPolicy } from './retry-policy.js';
import type { RetryPolicy, RetryPolicyOptions } from './retry-policy.js';
import { InvalidArgumentError } from './errors.js';

/**
 * Declare payload types per task type to type `enqueue` and `run`:
 * @example
 * declare module 'mailroom' { interface Tasks { send_email: { userId: number } } }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface Tasks {}

export type PayloadOf<T extends string> = T extends keyof Tasks ? Tasks[T] : unknown;

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
}

export type TaskHandler<P = unknown> = (payload: P, ctx: TaskContext<P>) => unknown | Promise<unknown>;

export interface TaskDefinition<P = unknown> extends RetryPolicyOptions {
  readonly run: TaskHandler<P>;
  /** Queue this type's jobs go to unless enqueue says otherwise. @default 'default' */
  readonly queue?: string;
}

export interface RegisteredTask {
  readonly type: string;
  readonly run: TaskHandler<any>;
  readonly queue: string | undefined;
  readonly policy: RetryPolicy;
  /** Options as given (for enqueue-time resolution of maxAttempts). */
  readonly maxAttempts: number | undefined;
}

export class TaskRegistry {
  private readonly tasks = new Map<string, RegisteredTask>();

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
    };
    this.tasks.set(type, task);
    return task;
  }

  get(type: string): RegisteredTask | undefined {
    return this.tasks.get(type);
  }

  types(): string[] {
    return [...this.tasks.keys()];
  }
}
