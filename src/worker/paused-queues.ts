// Which queues are paused, as a worker sees them when it is about to start a job it
// claimed earlier.
//
// The claim skips paused queues in the store, but a worker claims ahead of what it runs
// (its prefetch: from 4 to 250 jobs a slot), and those jobs were claimed before a pause.
// Started anyway, they would reach the provider the operator paused the queue for, and be
// charged an attempt each while it is down. So a worker holding such jobs reads the paused
// queues every REFRESH_MS and hands back, uncharged, those of a paused queue instead of
// starting them; a pause made through this process's Mailroom is seen at once. A resume
// elsewhere is seen at the next read, or sooner by a claim that returns the queue's jobs.

import type { Logger } from '../log.js';
import { monotonicNow } from './lease-keeper.js';

/** How often a worker holding unstarted jobs reads which queues are paused. */
export const PAUSED_QUEUES_REFRESH_MS = 1_000;

export class PausedQueues {
  /** Paused queues, each with when this worker learned it (monotonic ms: a read's send, a local pause). */
  private paused = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private isReading = false;
  /** Bumped by every local pause or resume: a read sent before one is stale. */
  private version = 0;

  /**
   * @param read the store's paused queues
   * @param isNeeded whether a read is worth it now (the worker holds unstarted jobs)
   * @param onChange called after a read or a local pause changed the set
   */
  constructor(
    private readonly read: () => Promise<ReadonlyArray<{ readonly queue: string }>>,
    private readonly isNeeded: () => boolean,
    private readonly onChange: () => void,
    private readonly log: Logger,
  ) {}

  has(queue: string): boolean {
    return this.paused.has(queue);
  }

  /**
   * A claim sent at `claimSentAtMs` returned a job of `queue`. The claim skips paused
   * queues, so if it was sent after this worker learned of the pause, the queue has been
   * resumed since (by another process): forget the pause rather than hand its jobs back
   * and claim them again until the next read.
   */
  claimedFrom(queue: string, claimSentAtMs: number): void {
    const learnedAt = this.paused.get(queue);
    if (learnedAt !== undefined && claimSentAtMs > learnedAt) this.paused.delete(queue);
  }

  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => void this.refresh(), PAUSED_QUEUES_REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** A pause or resume made through this process: known before the next read. */
  set(queue: string, isPaused: boolean): void {
    this.version++;
    if (isPaused === this.paused.has(queue)) return;
    if (isPaused) this.paused.set(queue, monotonicNow());
    else this.paused.delete(queue);
    this.onChange();
  }

  private async refresh(): Promise<void> {
    if (this.isReading || !this.isNeeded()) return;
    this.isReading = true;
    const sentAt = monotonicNow();
    const version = this.version;
    try {
      const rows = await this.read();
      // A local pause or resume landed while the read was out: it is newer than the read.
      if (version !== this.version) return;
      const next = new Map(rows.map((row) => [row.queue, this.paused.get(row.queue) ?? sentAt] as const));
      const changed = next.size !== this.paused.size || [...next.keys()].some((queue) => !this.paused.has(queue));
      this.paused = next;
      if (changed) this.onChange();
    } catch (error) {
      // The claim loop reports a store that is down; the last set known stays.
      this.log.debug({ err: error }, 'could not read the paused queues');
    } finally {
      this.isReading = false;
    }
  }
}
