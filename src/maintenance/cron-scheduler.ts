// Recurring jobs: at each slot of a cron schedule, enqueue one job whose idempotency key
// names the schedule and the slot (`cron:<name>:<slot ISO time>`). Any number of
// schedulers in any number of processes may fire for the same slot; the key makes the
// store keep exactly one job per slot. A slot missed while no scheduler ran is not caught
// up: the next one is.

import { createRequire } from 'node:module';
import { InvalidArgumentError, describeError } from '../core/errors.js';
import type { Logger } from '../log.js';
import { MaintenanceRunner } from './maintenance-runner.js';
import type { MaintenanceTask } from './maintenance-runner.js';

export interface ScheduleOptions {
  /** Cron syntax, 5 fields (minute precision) or 6 (seconds first). */
  readonly cron: string;
  /** The job type to enqueue at each slot. */
  readonly type: string;
  /** The payload of every job; the same in every scheduler, or the key conflicts. */
  readonly payload?: unknown;
  /** IANA time zone the expression is read in. @default 'UTC' */
  readonly timezone?: string;
  readonly queue?: string;
  readonly priority?: number;
  readonly maxAttempts?: number;
}

export interface Schedule extends ScheduleOptions {
  readonly name: string;
}

export type ScheduledEnqueue = (
  type: string,
  payload: unknown,
  options: { key: string; queue?: string; priority?: number; maxAttempts?: number },
) => Promise<unknown>;

/** The idempotency key of one slot of one schedule. */
export function slotKey(name: string, slot: Date): string {
  return `cron:${name}:${slot.toISOString()}`;
}

/** The first slot of `schedule` strictly after `after`. */
export function nextSlot(schedule: Pick<ScheduleOptions, 'cron' | 'timezone'>, after: Date): Date {
  return cronParser().parse(schedule.cron, { currentDate: after, tz: schedule.timezone ?? 'UTC' }).next().toDate();
}

/** Why an expression cannot be scheduled (in its time zone), or null when it can. */
export function cronProblem(schedule: Pick<ScheduleOptions, 'cron' | 'timezone'>): string | null {
  try {
    nextSlot(schedule, new Date());
    return null;
  } catch (cause) {
    const zone = schedule.timezone ? ` in ${schedule.timezone}` : '';
    return `"${schedule.cron}" is not a cron expression${zone} (${(cause as Error).message})`;
  }
}

/** The schedules of one Mailroom; once started, each fires under the maintenance runner. */
export class CronScheduler {
  private readonly schedules = new Map<string, Schedule>();
  private readonly tasks = new Map<string, MaintenanceTask>();
  private isRunning = false;

  constructor(
    private readonly enqueue: ScheduledEnqueue,
    private readonly log: Logger,
    /** Owns the slot timers: the Mailroom's runner, or one of its own when none is given. */
    private readonly runner: MaintenanceRunner = new MaintenanceRunner(log),
  ) {}

  /** Register (or replace) a schedule; validates the expression now. */
  add(name: string, options: ScheduleOptions): void {
    if (typeof name !== 'string' || name === '') throw new InvalidArgumentError('a schedule needs a non-empty name');
    if (typeof options.type !== 'string' || options.type === '') throw new InvalidArgumentError(`schedule "${name}" needs a job type`);
    const problem = cronProblem(options);
    if (problem) throw new InvalidArgumentError(`schedule "${name}": ${problem}`);
    this.schedules.set(name, { ...options, name });
    if (this.isRunning) this.arm(name);
  }

  start(): void {
    if (this.isRunning) return;
    this.isRunning = true;
    for (const name of this.schedules.keys()) this.arm(name);
  }

  stop(): void {
    this.isRunning = false;
    for (const task of this.tasks.values()) void task.stop();
    this.tasks.clear();
  }

  /** Enqueue the job of one slot (what a timer does when it fires). */
  async fire(name: string, slot: Date): Promise<void> {
    const schedule = this.schedules.get(name);
    if (!schedule) return;
    try {
      await this.enqueue(schedule.type, schedule.payload ?? null, {
        key: slotKey(name, slot),
        queue: schedule.queue,
        priority: schedule.priority,
        maxAttempts: schedule.maxAttempts,
      });
      this.log.debug({ schedule: name, slot: slot.toISOString() }, 'scheduled job enqueued');
    } catch (error) {
      this.log.error({ schedule: name, slot: slot.toISOString(), error: describeError(error) }, 'scheduled job could not be enqueued');
    }
  }

  /** (Re)start the slot timer of one schedule: at each slot, fire, then wait for the next. */
  private arm(name: string): void {
    const schedule = this.schedules.get(name);
    if (!schedule || !this.isRunning) return;
    void this.tasks.get(name)?.stop();
    this.tasks.set(
      name,
      this.runner.at({ name: `cron ${name}`, nextAt: (after) => nextSlot(schedule, after), run: (slot) => this.fire(name, slot) }),
    );
  }
}

let parser: typeof import('cron-parser').CronExpressionParser | undefined;

/** cron-parser (and the luxon it carries) only for processes that schedule: ~5 MB of RSS otherwise. */
function cronParser(): typeof import('cron-parser').CronExpressionParser {
  parser ??= (createRequire(import.meta.url)('cron-parser') as typeof import('cron-parser')).CronExpressionParser;
  return parser;
}
