// Per-task retry policy and its resolution: options given at enqueue, then the task's
// policy, then the library defaults.

import { DEFAULT_BACKOFF, computeBackoffMs, scheduleDelayMs } from './backoff.js';
import type { BackoffOptions } from './backoff.js';
import { InvalidArgumentError } from './errors.js';

/** 5 attempts: enough to ride out a few minutes of trouble with the default backoff. */
export const DEFAULT_MAX_ATTEMPTS = 5;
/** 5 minutes: long enough for reports, short enough that a hung handler is noticed. */
export const DEFAULT_TIMEOUT_MS = 5 * 60_000;
export const DEFAULT_QUEUE = 'default';
/** 100 snoozes: at a minute each, well over an hour of "not yet" before it counts as failing. */
export const DEFAULT_MAX_SNOOZES = 100;
/** 64 KiB of JSON per done job: a summary or an id, not a report (store those elsewhere). */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024;

export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly timeoutMs: number;
  readonly backoff: BackoffOptions;
  /** A fixed schedule (ms after each failed attempt) instead of exponential backoff. */
  readonly retryScheduleMs?: readonly number[];
  /** Snoozes allowed before one counts as a failed attempt. */
  readonly maxSnoozes: number;
  /** The largest return value kept as the job's `result`, in bytes of JSON; larger fails the attempt. */
  readonly maxResultBytes: number;
}

export interface RetryPolicyOptions {
  readonly maxAttempts?: number;
  readonly timeoutMs?: number;
  readonly backoff?: Partial<BackoffOptions>;
  readonly retryScheduleMs?: readonly number[];
  /** @default 100 */
  readonly maxSnoozes?: number;
  /** @default 65536 (64 KiB) */
  readonly maxResultBytes?: number;
}

export function resolveRetryPolicy(options: RetryPolicyOptions = {}): RetryPolicy {
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  assertPositiveInteger(maxAttempts, 'maxAttempts');
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(timeoutMs > 0)) throw new InvalidArgumentError('timeoutMs must be a positive number of ms');
  const backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
  if (!(backoff.baseMs >= 0) || !(backoff.capMs >= 0)) throw new InvalidArgumentError('backoff.baseMs and backoff.capMs must be >= 0');
  if (!['full', 'equal', 'none'].includes(backoff.jitter)) throw new InvalidArgumentError("backoff.jitter must be 'full', 'equal' or 'none'");
  const maxSnoozes = options.maxSnoozes ?? DEFAULT_MAX_SNOOZES;
  if (!Number.isInteger(maxSnoozes) || maxSnoozes < 0) throw new InvalidArgumentError('maxSnoozes must be a whole number >= 0');
  const maxResultBytes = options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
  assertPositiveInteger(maxResultBytes, 'maxResultBytes');
  return { maxAttempts, timeoutMs, backoff, retryScheduleMs: options.retryScheduleMs, maxSnoozes, maxResultBytes };
}

/** The delay before the next attempt after attempt `attempt` failed. */
export function retryDelayMs(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  return policy.retryScheduleMs
    ? scheduleDelayMs(attempt, policy.retryScheduleMs, 0.2, random)
    : computeBackoffMs(attempt, policy.backoff, random);
}

export function assertPositiveInteger(value: unknown, name: string): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new InvalidArgumentError(`${name} must be a whole number >= 1`);
  }
}
