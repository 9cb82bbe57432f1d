// Per-queue status counter deltas gathered while one SQLite transaction changes jobs, then
// written once per (queue, status) before it commits — the counters behind stats() stay
// exact without a row trigger per status change.

import type { JobStatus } from '../../core/types.js';

export class QueueCountDeltas {
  private readonly deltas = new Map<string, { queue: string; status: JobStatus; delta: number }>();

  add(queue: string, status: JobStatus, delta: number): void {
    const key = `${status}\u0000${queue}`;
    const entry = this.deltas.get(key);
    if (entry) entry.delta += delta;
    else this.deltas.set(key, { queue, status, delta });
  }

  /** One job moved from one status to another within its queue. */
  move(queue: string, from: JobStatus, to: JobStatus): void {
    if (from === to) return;
    this.add(queue, from, -1);
    this.add(queue, to, 1);
  }

  /** Write every non-zero delta with `apply` (the queueCountAdd statement). */
  flush(apply: (row: { queue: string; status: JobStatus; delta: number }) => void): void {
    for (const entry of this.deltas.values()) if (entry.delta !== 0) apply(entry);
    this.deltas.clear();
  }
}
