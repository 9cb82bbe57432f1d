// Writes outcomes, fenced by lease token, in batches: every finish (success, failure,
// hand-back, snooze) that arrives while one write is in flight joins the next one, and the
// store's one outcome writer (jobFinishMany) commits the batch in one transaction. A store
// outage is retried with backoff; if it outlasts the retries the job stays `running` and
// the rescue sweep hands it on when its lease expires (at-least-once, never lost).

import { setTimeout as sleep } from 'node:timers/promises';
import type { JobFinish, Store } from '../store/store.js';
import type { Logger } from '../log.js';

interface Pending {
  readonly finish: JobFinish;
  readonly resolve: (applied: boolean) => void;
}

/** 8 tries over roughly 10 s: rides out a lock or a failover without holding a job for long. */
const WRITE_RETRIES = 8;
const RETRY_BASE_MS = 40;

export class Completer {
  private pending: Pending[] = [];
  private isScheduled = false;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  /** Resolves true when the outcome was written, false when the write was fenced off (or given up on). */
  finish(finish: JobFinish): Promise<boolean> {
    return new Promise((resolve) => {
      this.pending.push({ finish, resolve });
      this.schedule();
    });
  }

  /** Several at once (a stop's hand-back): resolves with the ids written. */
  async finishAll(finishes: readonly JobFinish[]): Promise<string[]> {
    const applied = await Promise.all(finishes.map((finish) => this.finish(finish)));
    return finishes.filter((_, index) => applied[index]).map((finish) => finish.id);
  }

  /** Resolves once everything handed in so far is written (or given up on). */
  async idle(): Promise<void> {
    while (this.hasPending) {
      if (this.flushing) await this.flushing;
      else await this.flush();
    }
  }

  get hasPending(): boolean {
    return this.flushing !== null || this.isScheduled || this.pending.length > 0;
  }

  private schedule(): void {
    if (this.isScheduled || this.flushing) return;
    this.isScheduled = true;
    // setImmediate, not a timer: outcomes from the same turn of the event loop share a
    // transaction without adding latency.
    setImmediate(() => {
      if (!this.isScheduled) return; // idle() flushed already
      void this.flush();
    });
  }

  private flush(): Promise<void> {
    this.isScheduled = false;
    if (this.flushing) return this.flushing;
    this.flushing = (async () => {
      try {
        while (this.pending.length > 0) {
          const batch = this.pending;
          this.pending = [];
          const written = new Set(await this.writeWithRetry(batch.map((p) => p.finish)));
          for (const p of batch) p.resolve(written.has(p.finish.id));
        }
      } finally {
        this.flushing = null;
      }
    })();
    return this.flushing;
  }

  private async writeWithRetry(finishes: JobFinish[]): Promise<string[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.store.jobFinishMany({ finishes });
      } catch (error) {
        if (attempt >= WRITE_RETRIES) {
          this.log.error({ err: error }, 'could not record job outcomes; their leases will expire and the jobs run again');
          return [];
        }
        this.log.warn({ err: error, attempt }, 'store write failed; retrying');
        await sleep(RETRY_BASE_MS * 2 ** attempt);
      }
    }
  }
}
