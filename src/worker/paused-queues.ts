// Which queues are paused, as a worker sees them when it is about to start a job it
// claimed earlier.
//
// The claim skips paused queues in the store, but a worker claims ahead of what it runs
// (its prefetch: from 4 to 250 jobs a slot), and those jobs were claimed before a pause.
// Started anyway, they would reach the provider the operator paused the queue for, and be
// charged an attempt each while it is down. So a worker holding such jobs reads the paused
// queues every REFRESH_MS and hands back, uncharged, those of a paused queue instead of
// starting them; a pause made through this process's Mailroom is seen at once.

import type { Logger } from '../log.js';

/** How often a worker holding unstarted jobs reads which queues are paused. */
export const PAUSED_QUEUES_REFRESH_MS = 1_000;

export class PausedQueues {
  private paused = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private isReading = false;

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
    return this.paused.size > 0 && this.paused.has(queue);
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
    if (isPaused === this.paused.has(queue)) return;
    if (isPaused) this.paused.add(queue);
    else this.paused.delete(queue);
    this.onChange();
  }

  private async refresh(): Promise<void> {
    // Nothing held and nothing known paused: nothing to decide. A known pause is read again
    // even then, so that a resume elsewhere is seen before the next claim's jobs arrive.
    if (this.isReading || (!this.isNeeded() && this.paused.size === 0)) return;
    this.isReading = true;
    try {
      const next = new Set((await this.read()).map((row) => row.queue));
      const changed = next.size !== this.paused.size || [...next].some((queue) => !this.paused.has(queue));
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
