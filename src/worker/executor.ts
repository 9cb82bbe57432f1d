// Runs one claimed job: builds its context, enforces the timeout through the abort signal,
// and turns whatever the handler did into an Outcome. It writes nothing; the worker hands
// the outcome to the completer, fenced by the job's lease token.

import { TimeoutError, isPermanent, isRetryAfterFloor, retryAfterDelayMs, snoozeDelayMs } from '../core/errors.js';
import { MAX_DETAILS_BYTES, boundedJson } from '../core/bounded-json.js';
import { parseEventBody } from '../core/event-body.js';
import type { ClaimedJob, InboundEvent } from '../core/types.js';
import { DELIVERED_WITH_DONE } from '../core/task-registry.js';
import type { BatchContext, RegisteredTask, TaskContext } from '../core/task-registry.js';
import type { DeliveredAttempt } from '../store/outgoing-store.js';
import type { Logger } from '../log.js';
import { endAttempt, runInAttempt, startAttempt } from '../tracing.js';
import type { AttemptTrace } from '../tracing.js';

export type Outcome =
  /** Settled: `resultJson` is its return value as bounded JSON (null for none). */
  | { readonly kind: 'done'; readonly resultJson: string | null }
  /** Threw: retry after the policy's backoff or the handler's RetryAfter, or park if permanent. */
  | {
      readonly kind: 'failed';
      readonly error: unknown;
      readonly isPermanent: boolean;
      readonly retryAfterMs: number | null;
      /** The delay is a floor: the backoff wins when longer. */
      readonly isRetryAfterFloor?: boolean;
    }
  | { readonly kind: 'timeout'; readonly error: TimeoutError }
  /** Threw `Snooze`: not yet; the worker decides whether its allowance covers it. */
  | { readonly kind: 'snoozed'; readonly error: unknown; readonly delayMs: number }
  /** The worker aborted the handler (shutdown or lost lease) and it stopped. */
  | { readonly kind: 'aborted'; readonly error: unknown };

export interface Execution {
  /** Settles at the first of: the handler settling, or its timeout. */
  readonly outcome: Promise<Outcome>;
  /**
   * Settles when the handler itself has settled (it may ignore its signal past a timeout).
   * Set by start().
   */
  readonly settled: Promise<void>;
  /**
   * Runs the handler (its synchronous part runs inside this call) and starts its timeout.
   * Separate from execute() so that the worker can know the execution before the handler
   * can ask about its lease.
   */
  start(): void;
  /** Abort the handler's signal (shutdown, lost lease). */
  abort(reason: unknown): void;
  /** What the handler last gave `ctx.setDetails()`, as bounded JSON; written with any outcome. */
  readonly detailsJson: string | null;
  /** The deliver task's success, written with a `done` outcome (and dropped with any other). */
  readonly delivered: DeliveredAttempt | null;
}

export interface ExecuteOptions {
  readonly job: ClaimedJob;
  readonly task: RegisteredTask;
  /** The job's logger, made on first use: most handlers never log. */
  readonly log: () => Logger;
  readonly loadEvent: (eventId: string) => Promise<InboundEvent | null>;
  /** ctx.batch of a completion job: its batch, read when the attempt starts (null once purged). */
  readonly loadBatch: (batchId: string) => Promise<BatchContext | null>;
  /** ctx.enqueueBatch. */
  readonly enqueueBatch: TaskContext['enqueueBatch'];
  readonly extendLease: (ms: number) => Promise<void>;
  /**
   * Called whenever the handler reads its signal (`ctx.signal`, `signal.aborted`,
   * `signal.throwIfAborted()`), before the answer: the worker aborts the signal there if the
   * job's lease deadline has passed. JavaScript cannot interrupt a handler, so the moment it
   * asks is the moment it can be told, even before a timer of the worker's gets its turn.
   */
  readonly checkLease?: () => void;
  /** ctx.complete: the worker's transactional completion of this job. */
  readonly complete: TaskContext['complete'];
  /** ctx.progress: the worker's coalesced, fenced progress writer. */
  readonly progress: TaskContext['progress'];
}

const DONE: Outcome = Object.freeze({ kind: 'done', resultJson: null });

/**
 * Prepares the handler's run and returns handles on its outcome; start() runs it.
 *
 * Built for thousands of jobs a second: one timer and two promises per job, and the
 * AbortController only when the handler reads `ctx.signal` (creating one cost about 4 % of
 * a no-op job's CPU). A signal asked for after an abort comes back already aborted.
 */
export function execute(options: ExecuteOptions): Execution {
  const { job, task } = options;
  let controller: AbortController | undefined;
  let isAborted = false;
  let abortReason: unknown;
  let abortedByWorker = false;
  let isDecided = false;
  let resolveOutcome!: (outcome: Outcome) => void;
  const outcome = new Promise<Outcome>((resolve) => {
    resolveOutcome = resolve;
  });

  const abort = (reason: unknown): void => {
    if (isAborted) return;
    isAborted = true;
    abortReason = reason;
    controller?.abort(reason);
  };
  const signal = (): AbortSignal => {
    if (!controller) {
      controller = new AbortController();
      if (isAborted) controller.abort(abortReason);
      else if (options.checkLease) askingChecks(controller.signal, options.checkLease);
    }
    return controller.signal;
  };
  let timer: NodeJS.Timeout | undefined;
  let attempt!: AttemptTrace;
  const decide = (decided: Outcome): void => {
    if (isDecided) return;
    isDecided = true;
    clearTimeout(timer);
    endAttempt(attempt, decided);
    resolveOutcome(decided);
  };

  const setDetails = (details: unknown): void => {
    execution.detailsJson = boundedJson(details, MAX_DETAILS_BYTES, 'ctx.setDetails()');
  };
  const invoke = (payload: unknown, event: InboundEvent | null, batch: BatchContext | null): unknown =>
    runInAttempt(attempt, task.run, task, payload, jobContext(job, event, batch, signal, setDetails, execution, options));

  const execution = {
    outcome,
    settled: undefined as unknown as Promise<void>,
    detailsJson: null as string | null,
    delivered: null as DeliveredAttempt | null,
    start(): void {
      attempt = startAttempt(job);
      timer = setTimeout(() => {
        const error = new TimeoutError(task.policy.timeoutMs);
        abort(error);
        decide({ kind: 'timeout', error });
      }, task.policy.timeoutMs);
      timer.unref?.();
      let handler: Promise<unknown>;
      try {
        // Most jobs come from neither an event nor a batch: their handler starts in this call.
        handler =
          job.eventId !== null
            ? resolvePayload(job, job.eventId, options.loadEvent).then(({ payload, event }) => invoke(payload, event, null))
            : job.completesBatchId !== null
              ? options.loadBatch(job.completesBatchId).then((batch) => invoke(job.payload, null, batch))
              : Promise.resolve(invoke(job.payload, null, null));
      } catch (error) {
        handler = Promise.reject(error);
      }
      // Never rejects: it is the handler's settlement, and the outcome when it comes first.
      execution.settled = handler.then(
        (value: unknown) => decide(value === undefined ? DONE : doneWith(value, task.policy.maxResultBytes)),
        (error: unknown) => decide(abortedByWorker ? { kind: 'aborted', error } : thrownOutcome(error)),
      );
    },
    abort(reason: unknown) {
      if (isAborted) return;
      abortedByWorker = true;
      abort(reason);
    },
  };
  return execution;
}

/** Where a context's own getters find their job's state; one key, so every context shares one shape. */
const CONTEXT_STATE = Symbol('mailroom.jobContext');

interface ContextState {
  readonly signal: () => AbortSignal;
  readonly options: ExecuteOptions;
  /** Where the deliver task's success waits for the outcome (Execution.delivered). */
  readonly execution: { delivered: DeliveredAttempt | null };
  log: Logger | undefined;
}

type StatefulContext = TaskContext & { readonly [CONTEXT_STATE]: ContextState };

/**
 * `signal` and `log` are own getters, so a handler can spread, copy or proxy its context.
 * They are defined once here and read their job from the context, not closures per job:
 * an object literal with getters of its own (new functions each time) is built by the
 * runtime in dictionary mode, ~700 ns a job and slow to read; this is ~200 ns and one
 * shape for every context.
 */
const SIGNAL_PROPERTY: PropertyDescriptor = {
  get(this: StatefulContext) {
    const state = this[CONTEXT_STATE];
    state.options.checkLease?.();
    return state.signal();
  },
  enumerable: true,
  configurable: true,
};
const LOG_PROPERTY: PropertyDescriptor = {
  get(this: StatefulContext) {
    const state = this[CONTEXT_STATE];
    return (state.log ??= state.options.log());
  },
  enumerable: true,
  configurable: true,
};

/** The deliver task's hand-off (DELIVERED_WITH_DONE): one function for every context, like the getters. */
function setDelivered(this: StatefulContext, delivered: DeliveredAttempt): void {
  this[CONTEXT_STATE].execution.delivered = delivered;
}

/** The handler's view of its job; the logger and the signal are made on first use. */
function jobContext(
  job: ClaimedJob,
  event: InboundEvent | null,
  batch: BatchContext | null,
  signal: () => AbortSignal,
  setDetails: (details: unknown) => void,
  execution: { delivered: DeliveredAttempt | null },
  options: ExecuteOptions,
): TaskContext {
  const state: ContextState = { signal, options, execution, log: undefined };
  const context = {
    job,
    attempt: job.attempts,
    event,
    extendLease: options.extendLease,
    setDetails,
    complete: options.complete,
    progress: options.progress,
    batch,
    enqueueBatch: options.enqueueBatch,
    [CONTEXT_STATE]: state,
    [DELIVERED_WITH_DONE]: setDelivered,
  };
  Object.defineProperty(context, 'signal', SIGNAL_PROPERTY);
  Object.defineProperty(context, 'log', LOG_PROPERTY);
  return context as unknown as TaskContext;
}

/** A return value to keep as the job's result; one the store cannot keep fails the attempt. */
function doneWith(value: unknown, maxResultBytes: number): Outcome {
  try {
    return { kind: 'done', resultJson: boundedJson(value, maxResultBytes, 'the return value') };
  } catch (error) {
    return thrownOutcome(error);
  }
}

/** What a throw means: a snooze, or a failure carrying Permanent and RetryAfter read off it by code. */
function thrownOutcome(error: unknown): Outcome {
  const snoozeMs = snoozeDelayMs(error);
  if (snoozeMs !== null) return { kind: 'snoozed', error, delayMs: snoozeMs };
  return { kind: 'failed', error, isPermanent: isPermanent(error), retryAfterMs: retryAfterDelayMs(error), isRetryAfterFloor: isRetryAfterFloor(error) };
}

const abortedGetter = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'aborted')!.get!;
const throwIfAborted = AbortSignal.prototype.throwIfAborted;

/**
 * Makes `signal.aborted` and `signal.throwIfAborted()` run `check` first, on this one
 * signal (own properties; the prototype is untouched). Node's own consumers (fetch,
 * timers/promises, AbortSignal.any) read `aborted` the same way, so they are told too.
 */
function askingChecks(signal: AbortSignal, check: () => void): void {
  Object.defineProperties(signal, {
    aborted: {
      configurable: true,
      get(this: AbortSignal) {
        check();
        return abortedGetter.call(this) as boolean;
      },
    },
    throwIfAborted: {
      configurable: true,
      value(this: AbortSignal) {
        check();
        throwIfAborted.call(this);
      },
    },
  });
}

/**
 * A job fanned out from an inbound event references the event instead of copying it: its
 * payload is the event's parsed body and ctx.event holds the event itself.
 */
async function resolvePayload(
  job: ClaimedJob,
  eventId: string,
  loadEvent: (eventId: string) => Promise<InboundEvent | null>,
): Promise<{ payload: unknown; event: InboundEvent | null }> {
  const event = await loadEvent(eventId);
  if (!event) return { payload: job.payload, event: null };
  return { payload: parseEventBody(event.rawBody, event.headers['content-type']), event };
}
