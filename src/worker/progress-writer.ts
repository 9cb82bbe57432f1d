// ctx.progress(fraction, note): kept per job and written coalesced, at most one write per
// job every PROGRESS_INTERVAL_MS however often a handler reports, all jobs of the worker
// in one statement, each fenced by its lease token (a stale worker's progress is refused
// by the store). Progress is for people watching; losing a report to a failed write is
// harmless (the next one, or the outcome, follows), so nothing here retries.

import type { JobProgress, Store } from '../store/store.js';
import type { Logger } from '../log.js';
import { InvalidArgumentError } from '../core/errors.js';

/** Four writes a second per job at most: smooth for a progress bar, cheap for the store. */
export const PROGRESS_INTERVAL_MS = 250;
const MAX_NOTE_CHARS = 200;

export class ProgressWriter {
  private readonly pending = new Map<string, JobProgress>();
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  /** Checks a report and keeps it as the job's latest; written at the next tick. */
  report(lease: { readonly id: string; readonly leaseToken: string }, fraction: unknown, note: unknown): void {
    if (typeof fraction !== 'number' || !(fraction >= 0 && fraction <= 1)) throw new InvalidArgumentError('ctx.progress needs a fraction from 0 to 1');
    if (note !== undefined && note !== null && typeof note !== 'string') throw new InvalidArgumentError('ctx.progress: the note must be a string');
    const text = typeof note === 'string' ? note.slice(0, MAX_NOTE_CHARS) : null;
    this.pending.set(lease.id, { id: lease.id, leaseToken: lease.leaseToken, fraction, note: text });
    this.timer ??= setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, PROGRESS_INTERVAL_MS).unref();
  }

  /** Whether a report of this job waits to be written. */
  has(jobId: string): boolean {
    return this.pending.has(jobId);
  }

  /**
   * Writes a settling job's last report now, so it lands before the outcome clears the
   * lease token (after that it would be fenced off); the other jobs wait for their tick.
   */
  async flushJob(jobId: string): Promise<void> {
    const update = this.pending.get(jobId);
    if (!update) return;
    this.pending.delete(jobId);
    await this.write([update]);
  }

  /** Writes every pending report (the tick, and stop). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.pending.size === 0) return this.writing;
    const updates = [...this.pending.values()];
    this.pending.clear();
    await this.write(updates);
  }

  /** Forgets a job's unwritten report (its lease is gone). */
  drop(jobId: string): void {
    this.pending.delete(jobId);
  }

  private write(updates: JobProgress[]): Promise<void> {
    // One write at a time, in order: a later report never lands before an earlier one.
    this.writing = this.writing.then(async () => {
      try {
        await this.store.jobProgressMany({ updates });
      } catch (error) {
        this.log.warn({ err: error, jobs: updates.length }, 'could not record job progress; the next report will');
      }
    });
    return this.writing;
  }
}
