// Leases the worker holds (running or buffered jobs), and until when it can be sure it
// holds each one. The store grants a lease of `grantMs` measured from when it runs the
// claim or extension, which is after the worker sent it; so "sent at + grantMs" is never
// later than the store's expiry. The worker treats a lease as gone at
//
//   deadline = sent at + grantMs − grantMs/5     (monotonic clock, performance.now())
//
// The fifth is the safety margin: time for an aborted handler to stop, and for the
// deadline timer to fire a little late, before another worker can possibly take the job.
// At the deadline, with no newer successful extension, the job is reported gone
// ('expired') whether or not the store would still say it is ours: a heartbeat that was
// late (a starved event loop, a slow or dropped connection, a paused process) must not
// let a handler run on while a rescue or another worker's claim starts the same job.
//
// Heartbeats extend every held lease in one batch about every leaseMs/3, so a lease is
// normally renewed long before its deadline; a failed beat is retried after leaseMs/12,
// and one that hangs does not hold up the next.
// Extensions of one job never overlap (the heartbeat skips a job whose ctx.extendLease
// is in flight, and vice versa), so the last answer is the store's current expiry.

import type { Lease, Store } from '../store/store.js';
import type { Logger } from '../log.js';
import { ChurnMap } from './churn-map.js';

/** Why the worker no longer holds a lease: the store refused it, or its deadline passed. */
export type LeaseGoneReason = 'lost' | 'expired';

interface Held {
  readonly lease: Lease;
  /** Monotonic ms after which the worker no longer counts on the lease. */
  deadlineMs: number;
  /** What each extension asks for: leaseMs, or more after ctx.extendLease(ms). */
  grantMs: number;
  /** An extension of this lease is on its way. */
  isExtending: boolean;
}

/** The margin is a fifth of the grant: 400 ms of a 2 s lease, 12 s of the default 60 s. */
const SAFETY_FRACTION = 0.2;

function leaseDeadlineMs(sentAtMs: number, grantMs: number): number {
  return sentAtMs + grantMs * (1 - SAFETY_FRACTION);
}

export const monotonicNow = (): number => performance.now();

export class LeaseKeeper {
  private readonly held = new ChurnMap<string, Held>();
  private beatTimer: NodeJS.Timeout | null = null;
  private deadlineTimer: NodeJS.Timeout | null = null;
  /** When the deadline timer fires (Infinity: not armed). */
  private deadlineTimerAt = Infinity;
  private isStarted = false;
  private readonly beatEveryMs: number;
  private readonly retryBeatMs: number;

  constructor(
    private readonly store: Store,
    private readonly leaseMs: number,
    /** A held lease is gone; the worker aborts its handler or drops it from the buffer. */
    private readonly onGone: (jobId: string, reason: LeaseGoneReason) => void,
    private readonly log: Logger,
  ) {
    this.beatEveryMs = Math.max(100, Math.floor(leaseMs / 3));
    this.retryBeatMs = Math.max(50, Math.floor(leaseMs / 12));
  }

  start(): void {
    if (this.isStarted) return;
    this.isStarted = true;
    this.scheduleBeat(this.beatEveryMs);
  }

  stop(): void {
    this.isStarted = false;
    if (this.beatTimer) clearTimeout(this.beatTimer);
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.beatTimer = null;
    this.deadlineTimer = null;
    this.deadlineTimerAt = Infinity;
  }

  /** Leases just granted by a claim that was sent at `sentAtMs` (monotonic). */
  hold(leases: readonly Lease[], sentAtMs: number): void {
    if (leases.length === 0) return;
    const deadlineMs = leaseDeadlineMs(sentAtMs, this.leaseMs);
    for (const lease of leases) {
      this.held.set(lease.id, { lease: { id: lease.id, leaseToken: lease.leaseToken }, deadlineMs, grantMs: this.leaseMs, isExtending: false });
    }
    this.armDeadlineTimer(deadlineMs);
  }

  /** The worker is done with this lease (outcome decided, handed back, or gone). */
  release(jobId: string): void {
    this.held.delete(jobId);
  }

  /** True when the worker can no longer be sure it holds the job's lease (or never did). */
  isPastDeadline(jobId: string): boolean {
    const held = this.held.get(jobId);
    return held === undefined || monotonicNow() >= held.deadlineMs;
  }

  /**
   * Checks one job's deadline now, between timer ticks (a handler reading its signal, a
   * buffered job about to start): past it, the lease is reported gone at once.
   */
  check(jobId: string): void {
    const held = this.held.get(jobId);
    if (held && monotonicNow() >= held.deadlineMs) this.gone(jobId, 'expired');
  }

  /** Every held lease whose deadline has passed is reported gone; the timer is re-armed. */
  expireOverdue(): void {
    const now = monotonicNow();
    let next = Infinity;
    const overdue: string[] = [];
    for (const [id, held] of this.held) {
      if (held.deadlineMs <= now) overdue.push(id);
      else if (held.deadlineMs < next) next = held.deadlineMs;
    }
    for (const id of overdue) this.gone(id, 'expired');
    if (next < Infinity) this.armDeadlineTimer(next);
  }

  /**
   * ctx.extendLease(ms): at least `ms` more from now, and from then on every heartbeat asks
   * for that much. Resolves false when the lease is gone (and reports it).
   */
  async extend(jobId: string, ms: number): Promise<boolean> {
    const held = this.held.get(jobId);
    if (!held) return false;
    while (held.isExtending) await this.nextExtensionSettled();
    if (this.held.get(jobId) !== held) return false;
    held.grantMs = Math.max(held.grantMs, ms);
    await this.extendGroup([held], held.grantMs);
    return this.held.get(jobId) === held;
  }

  private gone(jobId: string, reason: LeaseGoneReason): void {
    if (!this.held.delete(jobId)) return;
    this.onGone(jobId, reason);
  }

  private armDeadlineTimer(atMs: number): void {
    if (!this.isStarted || atMs >= this.deadlineTimerAt) return;
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineTimerAt = atMs;
    this.deadlineTimer = setTimeout(() => {
      this.deadlineTimer = null;
      this.deadlineTimerAt = Infinity;
      this.expireOverdue();
    }, Math.max(0, Math.ceil(atMs - monotonicNow())));
    this.deadlineTimer.unref?.();
  }

  private scheduleBeat(delayMs: number): void {
    if (!this.isStarted) return;
    if (this.beatTimer) clearTimeout(this.beatTimer);
    this.beatTimer = setTimeout(() => {
      this.beatTimer = null;
      void this.beat();
    }, delayMs);
    this.beatTimer.unref?.();
  }

  private extensionWaiters: Array<() => void> = [];

  private nextExtensionSettled(): Promise<void> {
    return new Promise((resolve) => this.extensionWaiters.push(resolve));
  }

  private async beat(): Promise<void> {
    // The next beat is due whatever becomes of this one: a statement that hangs must not
    // stop the leases claimed after it from being renewed (its own leases stay marked as
    // extending, are skipped, and meet their deadline).
    this.scheduleBeat(this.beatEveryMs);
    // Deadlines first: a lease past its deadline is not renewed even if the store would
    // still grant it, because its handler may already have been told nothing.
    this.expireOverdue();
    const byGrant = new Map<number, Held[]>();
    for (const held of this.held.values()) {
      if (held.isExtending) continue;
      const group = byGrant.get(held.grantMs);
      if (group) group.push(held);
      else byGrant.set(held.grantMs, [held]);
    }
    if (byGrant.size === 0) return;
    const results = await Promise.all([...byGrant].map(([grantMs, group]) => this.extendGroup(group, grantMs)));
    if (!results.every(Boolean)) this.scheduleBeat(this.retryBeatMs);
  }

  /** One extension statement; false when it failed (the leases are neither lost nor renewed). */
  private async extendGroup(group: readonly Held[], grantMs: number): Promise<boolean> {
    for (const held of group) held.isExtending = true;
    const sentAtMs = monotonicNow();
    let renewed: Set<string>;
    try {
      renewed = new Set(await this.store.jobExtendLease({ leases: group.map((held) => held.lease), leaseMs: grantMs }));
    } catch (error) {
      this.log.warn({ err: error, leases: group.length }, 'lease heartbeat failed; retrying before the deadline');
      return false;
    } finally {
      for (const held of group) held.isExtending = false;
      for (const resolve of this.extensionWaiters.splice(0)) resolve();
    }
    const deadlineMs = leaseDeadlineMs(sentAtMs, grantMs);
    for (const held of group) {
      if (this.held.get(held.lease.id) !== held) continue; // released or gone meanwhile
      if (renewed.has(held.lease.id)) held.deadlineMs = deadlineMs;
      else this.gone(held.lease.id, 'lost');
    }
    return true;
  }
}
