// Writes outcomes, fenced by lease token, in batches: every completion (and failure) that
// arrives while one write is in flight joins the next one, so a busy worker commits many
// outcomes per transaction. A store outage is retried with backoff; if it outlasts the
// retries the job stays `running` and the rescue sweep hands it on when its lease expires
// (at-least-once, never lost).

import { setTimeout as sleep } from 'node:timers/promises';
import type { JobFailure, Lease, Store } from '../store/store.js';
import type { Logger } from '../log.js';

interface Pending<T> {
  readonly item: T;
  readonly resolve: (applied: boolean) => void;
}

/** 8 tries over roughly 10 s: rides out a lock or a failover without holding a job for long. */
const WRITE_RETRIES = 8;
const RETRY_BASE_MS = 40;

export class Completer {
  private completions: Pending<Lease>[] = [];
  private failures: Pending<JobFailure>[] = [];
  private isScheduled = false;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  /** Resolves true when the job was marked done, false when the write was fenced off. */
  complete(lease: Lease): Promise<boolean> {
    return new Promise((resolve) => {
      this.completions.push({ item: { id: lease.id, leaseToken: lease.leaseToken }, resolve });
      this.schedule();
    });
  }

  fail(failure: JobFailure): Promise<boolean> {
    return new Promise((resolve) => {
      this.failures.push({ item: failure, resolve });
      this.schedule();
    });
  }

  async handBack(leases: readonly Lease[]): Promise<string[]> {
    if (leases.length === 0) return [];
    return this.withRetry('hand back', () => this.store.jobHandBack({ leases }), []);
  }

  /** Resolves once everything handed in so far is written (or given up on). */
  async idle(): Promise<void> {
    while (this.flushing || this.isScheduled || this.completions.length > 0 || this.failures.length > 0) {
      if (this.flushing) await this.flushing;
      else await this.flush();
    }
  }

  get hasPending(): boolean {
    return this.flushing !== null || this.isScheduled || this.completions.length > 0 || this.failures.length > 0;
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
        while (this.completions.length > 0 || this.failures.length > 0) {
          const completions = this.completions;
          const failures = this.failures;
          this.completions = [];
          this.failures = [];
          if (completions.length > 0) {
            const done = new Set(
              await this.withRetry('complete', () => this.store.jobComplete({ leases: completions.map((p) => p.item) }), []),
            );
            for (const p of completions) p.resolve(done.has(p.item.id));
          }
          if (failures.length > 0) {
            const failed = new Set(
              await this.withRetry('fail', () => this.store.jobFail({ failures: failures.map((p) => p.item) }), []),
            );
            for (const p of failures) p.resolve(failed.has(p.item.id));
          }
        }
      } finally {
        this.flushing = null;
      }
    })();
    return this.flushing;
  }

  private async withRetry<T>(what: string, write: () => Promise<T>, fallback: T): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (error) {
        if (attempt >= WRITE_RETRIES) {
          this.log.error({ err: error, what }, 'could not record job outcomes; their leases will expire and the jobs run again');
          return fallback;
        }
        this.log.warn({ err: error, what, attempt }, 'store write failed; retrying');
        await sleep(RETRY_BASE_MS * 2 ** attempt);
      }
    }
  }
}
