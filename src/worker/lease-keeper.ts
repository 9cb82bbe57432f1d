// Heartbeats: extends the leases of every job the worker holds (running or prefetched) in
// one batch about every leaseMs/3. A lease the store no longer grants is lost: the job's
// handler sees its signal aborted and its outcome will be fenced.

import type { Lease, Store } from '../store/store.js';
import type { Logger } from '../log.js';

export class LeaseKeeper {
  private timer: NodeJS.Timeout | null = null;
  private isBeating = false;

  constructor(
    private readonly store: Store,
    private readonly leaseMs: number,
    private readonly held: () => Lease[],
    private readonly onLost: (jobId: string) => void,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.beat(), Math.max(100, Math.floor(this.leaseMs / 3)));
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Extend one job's lease now (ctx.extendLease); throws nothing, reports loss via onLost. */
  async extend(lease: Lease, ms: number): Promise<boolean> {
    const held = await this.store.jobExtendLease({ leases: [lease], leaseMs: Math.max(ms, this.leaseMs) });
    if (held.length === 0) this.onLost(lease.id);
    return held.length > 0;
  }

  private async beat(): Promise<void> {
    if (this.isBeating) return;
    const leases = this.held();
    if (leases.length === 0) return;
    this.isBeating = true;
    try {
      const held = new Set(await this.store.jobExtendLease({ leases, leaseMs: this.leaseMs }));
      for (const lease of leases) if (!held.has(lease.id)) this.onLost(lease.id);
    } catch (error) {
      // A missed beat is not a lost lease: the next beat may get through before expiry.
      this.log.warn({ err: error }, 'lease heartbeat failed; will retry');
    } finally {
      this.isBeating = false;
    }
  }
}
