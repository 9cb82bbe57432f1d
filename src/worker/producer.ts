// The claim loop: claims jobs in batches of about half the worker's capacity (free slots
// plus a bounded prefetch), wakes on an in-process enqueue or a NOTIFY, otherwise sleeps
// until the next delayed job is due or pollMs, and backs off while the store fails. It
// decides when to claim and how many; the worker decides what happens to the jobs.

import type { ClaimedJob } from '../core/types.js';
import type { Store } from '../store/store.js';
import type { ChangeSignal } from './change-signal.js';
import { monotonicNow } from './lease-keeper.js';
import type { YieldPacer } from './yield-pacer.js';
import type { TypeLimits } from '../store/limits.js';

/** The worker's side of the claim loop: how much room it has and where claimed jobs go. */
export interface ClaimTarget {
  /** Jobs the worker may still take on: its capacity less what it runs, holds or abandoned. */
  freeSlots(): number;
  /** Claimed jobs waiting for a slot. */
  bufferedCount(): number;
  /** Jobs the worker could start at once: the most a claim may take under concurrency limits. */
  startableSlots(): number;
  /** Jobs just claimed by a claim sent at `claimSentAtMs` (monotonic): hold, buffer, start. */
  accept(jobs: ClaimedJob[], claimSentAtMs: number): void;
  /** Jobs a claim returned after stop began: back to pending, uncharged. */
  handBack(jobs: ClaimedJob[]): Promise<void>;
  /** A claim found nothing due. */
  idle(): void;
  /** A claim or the subscription failed (logged and reported by the worker). */
  storeError(error: unknown): void;
}

export interface ProducerOptions {
  readonly store: Store;
  readonly workerId: string;
  /** Queues to claim from; null means every queue. */
  readonly queues: readonly string[] | null;
  /** Types with a handler, asked at every claim (tasks may be registered later). */
  readonly types: () => string[];
  /** The limits of the limited types among them (the store enforces them in each claim). */
  readonly limits: () => TypeLimits[];
  readonly leaseMs: number;
  /** Longest idle wait between claims when nothing wakes the loop. */
  readonly pollMs: number;
  /** Claims wait until this many slots are free, so they come in batches (it moves with an adaptive prefetch). */
  readonly claimBatch: () => number;
  readonly changes: ChangeSignal;
  readonly pacer: YieldPacer;
}

/** Longest back-off between claim attempts while the store is failing. */
const MAX_ERROR_BACKOFF_MS = 5_000;

export class Producer {
  private readonly store: Store;
  private readonly options: ProducerOptions;
  private readonly changes: ChangeSignal;
  private readonly pacer: YieldPacer;
  private isStopping = false;
  private loopPromise: Promise<void> | null = null;
  /** A claim is on its way to or from the store (drained() must not miss its jobs). */
  private claimsInFlight = 0;
  private wakeUp: (() => void) | null = null;
  private wakePending = false;
  private unsubscribe: (() => Promise<void>) | null = null;

  constructor(
    options: ProducerOptions,
    private readonly target: ClaimTarget,
  ) {
    this.options = options;
    this.store = options.store;
    this.changes = options.changes;
    this.pacer = options.pacer;
  }

  /** Subscribe to NOTIFY when the store can, and start the loop. */
  start(): void {
    if (this.loopPromise) return;
    const { queues } = this.options;
    if (this.store.capabilities.listenNotify && this.store.subscribe) {
      this.store
        .subscribe((queue) => {
          if (queue === null || queues === null || queues.includes(queue)) this.wake();
        })
        .then((unsubscribe) => {
          if (this.isStopping) void unsubscribe();
          else this.unsubscribe = unsubscribe;
        })
        .catch((error) => this.target.storeError(error));
    }
    this.loopPromise = this.loop();
  }

  /** No new claims; resolves once the loop has ended (a claim in flight has come back). */
  async stop(): Promise<void> {
    this.isStopping = true;
    this.wake();
    if (this.unsubscribe) await this.unsubscribe().catch(() => undefined);
    await this.loopPromise?.catch(() => undefined);
  }

  /** Poke the loop: a job may have become available (in-process enqueue, NOTIFY, a rescue). */
  wake(): void {
    this.wakePending = true;
    const wake = this.wakeUp;
    this.wakeUp = null;
    wake?.();
  }

  get isStarted(): boolean {
    return this.loopPromise !== null;
  }

  /** A claim is on its way to or from the store. */
  get isClaiming(): boolean {
    return this.claimsInFlight > 0;
  }

  private async loop(): Promise<void> {
    const { claimBatch } = this.options;
    let errorBackoffMs = 0;
    while (!this.isStopping) {
      // While buffered work remains, wait until half the capacity is free: claiming one job
      // per freed slot would cost a transaction per job.
      if (!this.hasSlots(claimBatch())) {
        await this.waitForSlot(claimBatch());
        continue;
      }
      // Limited jobs are claimed only as many as can start at once. A worker whose every
      // type is limited, with no slot to start one in, would get nothing back and then ask
      // when something is due: 16 % of an outgoing drain's claims were that pair. The job
      // that frees a slot wakes this loop (Worker.wakeForFreedSlot).
      if (this.target.startableSlots() === 0 && this.isLimitedOnly()) {
        this.wakePending = false;
        await this.wait(this.options.pollMs);
        continue;
      }
      const free = this.target.freeSlots();
      let claimedCount = 0;
      let nextRunInMs: number | null = null;
      {
        try {
          // Yield to the event loop every few ms. With a synchronous store and fast
          // handlers, claim -> run -> settle -> claim is a chain of microtasks that would
          // otherwise drain a whole backlog without letting an HTTP request, a timer or the
          // completer's flush run (measured: a 2 s block on a 10,000-job drain).
          if (this.pacer.isDue()) {
            await new Promise<void>((resolve) => setImmediate(resolve));
            this.pacer.yielded();
            if (this.isStopping) break;
          }
          this.wakePending = false;
          this.claimsInFlight++;
          let jobs: ClaimedJob[];
          // The lease runs from when the store executes the claim, which is after this.
          const claimSentAtMs = monotonicNow();
          try {
            jobs = await this.store.jobClaim({
              workerId: this.options.workerId,
              types: this.options.types(),
              queues: this.options.queues,
              limits: this.options.limits(),
              limitedLimit: this.target.startableSlots(),
              limit: free,
              leaseMs: this.options.leaseMs,
            });
          } finally {
            this.claimsInFlight--;
          }
          errorBackoffMs = 0;
          claimedCount = jobs.length;
          if (jobs.length > 0) {
            if (this.isStopping) {
              await this.target.handBack(jobs);
              break;
            }
            this.target.accept(jobs, claimSentAtMs);
          }
          if (jobs.length === 0) {
            // Nothing is due: find when the next delayed job is, to sleep until then.
            this.target.idle();
            this.changes.notify();
            if (!this.wakePending) {
              nextRunInMs = (
                await this.store.jobClaimable({ types: this.options.types(), queues: this.options.queues, limits: this.options.limits() })
              ).nextRunInMs;
            }
          } else if (jobs.length < free) {
            this.changes.notify();
          }
        } catch (error) {
          this.target.storeError(error);
          errorBackoffMs = Math.min(MAX_ERROR_BACKOFF_MS, Math.max(50, errorBackoffMs * 2));
          await this.wait(errorBackoffMs);
          continue;
        }
      }
      if (this.isStopping) break;
      if (claimedCount > 0 && claimedCount >= free) {
        // A full batch: more may be waiting. Claim again once enough slots free up.
        await this.waitForSlot(claimBatch());
        continue;
      }
      if (this.wakePending) continue;
      let sleepMs = this.options.pollMs;
      // On the store's clock: this process's own may be off.
      if (nextRunInMs !== null) sleepMs = Math.max(1, Math.min(sleepMs, nextRunInMs));
      await this.wait(sleepMs);
    }
  }

  /** Whether every type this worker claims is under a limit. */
  private isLimitedOnly(): boolean {
    const limits = this.options.limits();
    return limits.length > 0 && this.options.types().every((type) => limits.some((limit) => limit.type === type));
  }

  /** Resolves once `wanted` slots are free (or the buffer ran dry), on wake(), on stop, or after pollMs. */
  private waitForSlot(wanted: number): Promise<void> {
    if (this.hasSlots(wanted)) return Promise.resolve();
    return this.wait(this.options.pollMs, () => this.hasSlots(wanted));
  }

  private hasSlots(wanted: number): boolean {
    const free = this.target.freeSlots();
    return this.isStopping || (free > 0 && (free >= wanted || this.target.bufferedCount() === 0));
  }

  /**
   * Resolves after `ms`, on wake(), or on the first change after which `until` holds.
   * One timer for the whole wait, re-checked on each change: waking the claim loop on
   * every change cost a loop turn and a timer for every finished job.
   */
  private wait(ms: number, until?: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      let isDone = false;
      const finish = () => {
        if (isDone) return;
        isDone = true;
        clearTimeout(timer);
        if (this.wakeUp === finish) this.wakeUp = null;
        // Ended by the timer or wake(): drop the re-check, or waits that end that way
        // (slots held by slow handlers, a NOTIFY per enqueue) would pile up until a change.
        this.changes.forget(check);
        resolve();
      };
      const check = () => {
        if (isDone) return;
        if (until!()) finish();
        else this.changes.once(check);
      };
      const timer = setTimeout(finish, ms);
      this.wakeUp = finish;
      if (until) this.changes.once(check);
    });
  }
}
