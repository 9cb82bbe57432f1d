// Runs one claimed job: builds its context, enforces the timeout through the abort signal,
// and turns whatever the handler did into an Outcome. It writes nothing; the worker hands
// the outcome to the completer, fenced by the job's lease token.

import { TimeoutError, isPermanent, retryAfterDelayMs } from '../core/errors.js';
import type { ClaimedJob, InboundEvent } from '../core/types.js';
import type { RegisteredTask, TaskContext } from '../core/task-registry.js';
import type { Logger } from '../log.js';

export type Outcome =
  | { readonly kind: 'done' }
  /** Threw: retry after the policy's backoff or the handler's RetryAfter, or park if permanent. */
  | { readonly kind: 'failed'; readonly error: unknown; readonly isPermanent: boolean; readonly retryAfterMs: number | null }
  | { readonly kind: 'timeout'; readonly error: TimeoutError }
  /** The worker aborted the handler (shutdown or lost lease) and it stopped. */
  | { readonly kind: 'aborted'; readonly error: unknown };

export interface Execution {
  /** Settles at the first of: the handler settling, or its timeout. */
  readonly outcome: Promise<Outcome>;
  /** Settles when the handler itself has settled (it may ignore its signal past a timeout). */
  readonly settled: Promise<void>;
  /** Abort the handler's signal (shutdown, lost lease). */
  abort(reason: unknown): void;
}

export interface ExecuteOptions {
  readonly job: ClaimedJob;
  readonly task: RegisteredTask;
  /** The job's logger, made on first use: most handlers never log. */
  readonly log: () => Logger;
  readonly loadEvent: (eventId: string) => Promise<InboundEvent | null>;
  readonly extendLease: (ms: number) => Promise<void>;
}

/** Starts the handler now and returns handles on its outcome. */
export function execute(options: ExecuteOptions): Execution {
  const { job, task } = options;
  const controller = new AbortController();
  let abortedByWorker = false;
  let timer: NodeJS.Timeout | undefined;

  const timeout = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => {
      const error = new TimeoutError(task.policy.timeoutMs);
      controller.abort(error);
      resolve({ kind: 'timeout', error });
    }, task.policy.timeoutMs);
    timer.unref?.();
  });

  const run = (async (): Promise<Outcome> => {
    try {
      let payload = job.payload;
      let event: InboundEvent | null = null;
      if (job.eventId !== null) ({ payload, event } = await resolvePayload(job, options.loadEvent));
      let log: Logger | undefined;
      const ctx: TaskContext = {
        job,
        attempt: job.attempts,
        signal: controller.signal,
        get log() {
          return (log ??= options.log());
        },
        event,
        extendLease: options.extendLease,
      };
      await task.run(payload, ctx);
      return { kind: 'done' };
    } catch (error) {
      if (abortedByWorker) return { kind: 'aborted', error };
      return {
        kind: 'failed',
        error,
        isPermanent: isPermanent(error),
        retryAfterMs: retryAfterDelayMs(error),
      };
    } finally {
      clearTimeout(timer);
    }
  })();

  return {
    outcome: Promise.race([run, timeout]),
    settled: run.then(
      () => undefined,
      () => undefined,
    ),
    abort(reason: unknown) {
      if (controller.signal.aborted) return;
      abortedByWorker = true;
      controller.abort(reason);
    },
  };
}

/**
 * A job fanned out from an inbound event references the event instead of copying it: its
 * payload is the event's parsed body and ctx.event holds the event itself.
 */
async function resolvePayload(
  job: ClaimedJob,
  loadEvent: (eventId: string) => Promise<InboundEvent | null>,
): Promise<{ payload: unknown; event: InboundEvent | null }> {
  if (job.eventId === null) return { payload: job.payload, event: null };
  const event = await loadEvent(job.eventId);
  if (!event) return { payload: job.payload, event: null };
  return { payload: parseEventBody(event), event };
}

/** JSON bodies parse to values; anything else is handed over as text. */
export function parseEventBody(event: InboundEvent): unknown {
  const text = event.rawBody.toString('utf8');
  const contentType = (event.headers['content-type'] ?? '').toLowerCase();
  if (contentType === '' || contentType.includes('json')) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}
