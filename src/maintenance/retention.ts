// The retention purger: every `intervalMs`, delete `done` jobs finished more than `doneMs`
// ago (with their attempt history) and stored events past the same window that no job
// references any more (their dedupe receipts go with them). Dead, pending and running
// jobs are never touched unless a `deadMs` window is given for dead ones.
// Started by a Mailroom with its first worker (`Mailroom.open({ retention })`, on by
// default), under its maintenance runner, so library users, `mailroom worker` and
// `mailroom serve` alike purge; one purger per process is plenty, and several (many
// processes) only repeat a cheap DELETE that finds nothing.

import { InvalidArgumentError } from '../core/errors.js';
import type { Logger } from '../log.js';
import type { Mailroom } from '../mailroom.js';
import { MaintenanceRunner } from './maintenance-runner.js';

/** 7 days: longer than any provider's redelivery horizon, so dedupe still holds for redeliveries. */
export const DEFAULT_DONE_RETENTION_MS = 7 * 24 * 3_600_000;

/** The retention window and cadence a user chooses (`Mailroom.open({ retention })`). */
export interface RetentionSettings {
  /**
   * Keep done jobs (and the dedupe receipts of their events) this long. Longer than any
   * provider's redelivery horizon, or a late redelivery runs its jobs twice.
   * @default 604800000 (7 days)
   */
  readonly doneMs?: number;
  /** Also purge dead jobs finished this long ago. @default never: dead jobs wait for a replay */
  readonly deadMs?: number;
  /** Between purges. The first runs at once. @default 600000 (10 minutes) */
  readonly intervalMs?: number;
}

export interface RetentionOptions extends RetentionSettings {
  /** Where "purged" lines and failures go. @default mr.log */
  readonly log?: Logger;
  /** Called after every run (tests await it instead of sleeping). */
  readonly onRun?: (result: RetentionRunResult) => void;
}

export type RetentionRunResult =
  | { readonly ok: true; readonly jobs: number; readonly events: number; readonly durationMs: number }
  | { readonly ok: false; readonly error: unknown; readonly durationMs: number };

/** 10 minutes: done rows pile up slowly next to the 7-day window; a purge per tick stays small. */
export const DEFAULT_RETENTION_INTERVAL_MS = 10 * 60_000;

/** Stops the purger; resolves once a purge in flight has finished. Safe to call twice. */
export type StopRetention = () => Promise<void>;

/**
 * Start purging in the background under `runner` (the Mailroom's; a runner of its own
 * when none is given); returns the function that stops it. The first purge runs at once;
 * a purge still running at the next interval skips that tick. A failed purge is logged
 * and tried again next interval; it never throws into the caller.
 * @example const stopRetention = startRetention(mr, { doneMs: config.retention?.doneMs, log });
 *          // on shutdown: await stopRetention();
 */
export function startRetention(mr: Mailroom, options: RetentionOptions = {}, runner?: MaintenanceRunner): StopRetention {
  const settings = validateRetention(options);
  const log = options.log ?? mr.log;
  const task = (runner ?? new MaintenanceRunner(log)).every({
    name: 'retention',
    intervalMs: settings.intervalMs,
    runNow: true,
    skipWhileRunning: true,
    run: async () => {
      const result = await runRetentionOnce(mr, { ...settings, log });
      options.onRun?.(result);
    },
  });
  log.debug({ doneMs: settings.doneMs, deadMs: settings.deadMs, intervalMs: settings.intervalMs }, 'retention started');
  return () => task.stop();
}

/** One purge now, logged; resolves to what it deleted or the error (never rejects). */
export async function runRetentionOnce(mr: Mailroom, options: RetentionOptions = {}): Promise<RetentionRunResult> {
  const { doneMs, deadMs } = validateRetention(options);
  const log = options.log ?? mr.log;
  const startedAt = performance.now();
  try {
    const { jobs, events } = await mr.purge({ olderThanMs: doneMs, deadOlderThanMs: deadMs });
    const durationMs = Math.round(performance.now() - startedAt);
    if (jobs > 0 || events > 0) log.info({ jobs, events, doneMs, deadMs, durationMs }, 'retention purged old jobs');
    else log.debug({ durationMs }, 'retention found nothing to purge');
    return { ok: true, jobs, events, durationMs };
  } catch (error) {
    const durationMs = Math.round(performance.now() - startedAt);
    log.warn({ err: error, durationMs }, 'retention purge failed; will retry next interval');
    return { ok: false, error, durationMs };
  }
}

/**
 * The settings with defaults filled in.
 * @throws InvalidArgumentError for a window or interval that is not a positive number of ms
 */
export function validateRetention(options: RetentionSettings): { doneMs: number; deadMs: number | undefined; intervalMs: number } {
  const doneMs = options.doneMs ?? DEFAULT_DONE_RETENTION_MS;
  const intervalMs = options.intervalMs ?? DEFAULT_RETENTION_INTERVAL_MS;
  if (!Number.isFinite(doneMs) || doneMs <= 0) throw new InvalidArgumentError(`retention doneMs must be a positive number of ms, not ${doneMs}`);
  if (options.deadMs !== undefined && (!Number.isFinite(options.deadMs) || options.deadMs <= 0)) {
    throw new InvalidArgumentError(`retention deadMs must be a positive number of ms, not ${options.deadMs}`);
  }
  if (!Number.isFinite(intervalMs) || intervalMs < 1_000) throw new InvalidArgumentError(`retention intervalMs must be at least 1000, not ${intervalMs}`);
  return { doneMs, deadMs: options.deadMs, intervalMs };
}
